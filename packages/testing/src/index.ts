export const placeholder = 'testing';
