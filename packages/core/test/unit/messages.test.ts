import { isToken, readForcedNotice, readPermitCounts } from '../../src/objects/messages.js';
import { handOffOwner } from '../../src/objects/fair-queue/fair-queue-scripts.js';

const CLIENT = 'AbCdEfGhIjKlMnOpQrS_1';

describe('messages', () => {
  describe('isToken', () => {
    it.each(['1', '42', '9007199254740991'])('reads %s as a token', (text) => expect(isToken(text)).toBe(true));
    it.each(['', '0', '-1', '01', '1e400', 'not-a-number', '9007199254740992', '99999999999999999', ' 1', '1.5', 'Infinity'])('refuses %j', (text) =>
      expect(isToken(text)).toBe(false),
    );
  });

  describe('readForcedNotice', () => {
    it('reads a notice for a hold of this client under its prefix, the key whole', () => {
      expect(readForcedNotice(`forced ${CLIENT}:t1 17 rlock:{a b}`, CLIENT, 'rlock')).toEqual({ owner: `${CLIENT}:t1`, token: '17', key: 'rlock:{a b}' });
    });
    it.each([
      ['another client', `forced Other_Client_Id_12345:t1 17 rlock:{a}`],
      ['a bad token', `forced ${CLIENT}:t1 1e400 rlock:{a}`],
      ['a negative token', `forced ${CLIENT}:t1 -1 rlock:{a}`],
      ['another prefix', `forced ${CLIENT}:t1 17 other:{a}`],
      ['no key', `forced ${CLIENT}:t1 17`],
      ['another verb', `unlock ${CLIENT}:t1 17 rlock:{a}`],
      ['garbage', '\u0000\u001b[2J'],
    ])('drops one with %s', (_what, payload) => expect(readForcedNotice(payload, CLIENT, 'rlock')).toBeUndefined());
  });

  describe('readPermitCounts', () => {
    it('reads "<came back>:<available>"', () => expect(readPermitCounts('2:0')).toEqual({ cameBack: 2, available: 0 }));
    it.each(['', ':', '1:', ':1', '-1:5', '1e400:1', '1:2:3', 'need:x', '9007199254740992:1'])('drops %j', (payload) =>
      expect(readPermitCounts(payload)).toBeUndefined(),
    );
  });

  describe("a fair lock's hand-off", () => {
    it('names an owner of this client with a decimal token (the op may be empty)', () => {
      expect(handOffOwner(`${CLIENT}:t9 123 4f`, CLIENT)).toBe(`${CLIENT}:t9`);
      expect(handOffOwner(`${CLIENT}:t9 123 `, CLIENT)).toBe(`${CLIENT}:t9`);
    });
    it.each([`${CLIENT}:t9 -1 4f`, `${CLIENT}:t9 not-a-number 4f`, `${CLIENT}:t9 1e400 4f`, `Other_Client_Id_12345:t9 123 4f`, `${CLIENT}:t9`, 'unlock', ''])(
      'drops %j',
      (payload) => expect(handOffOwner(payload, CLIENT)).toBeUndefined(),
    );
  });
});
