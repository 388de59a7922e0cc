import { encodeCommand, parseReply, RespErrorReply } from '../../src/resp-connection.js';

describe('RESP codec', () => {
  describe('encodeCommand', () => {
    it('encodes arguments as bulk strings, empty ones included', () => {
      expect(encodeCommand(['SET', 'k', '', 5]).toString()).toBe('*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$1\r\n5\r\n');
    });
  });

  describe('parseReply', () => {
    it('parses every RESP2 type', () => {
      const buffer = Buffer.from('+PONG\r\n-ERR no\r\n:42\r\n$-1\r\n*2\r\n$3\r\nfoo\r\n:1\r\n');
      const values = [];
      let offset = 0;
      for (let parsed = parseReply(buffer, offset); parsed; parsed = parseReply(buffer, offset)) {
        values.push(parsed.value);
        offset = parsed.next;
      }
      expect(values[0]).toBe('PONG');
      expect(values[1]).toBeInstanceOf(RespErrorReply);
      expect((values[1] as RespErrorReply).message).toBe('ERR no');
      expect(values.slice(2)).toEqual([42, null, ['foo', 1]]);
      expect(offset).toBe(buffer.length);
    });

    it('waits for the rest of a reply split across chunks', () => {
      expect(parseReply(Buffer.from('$5\r\nhel'), 0)).toBeUndefined();
      expect(parseReply(Buffer.from('*2\r\n:1\r\n'), 0)).toBeUndefined();
      expect(parseReply(Buffer.from('+PON'), 0)).toBeUndefined();
    });
  });
});
