export const placeholder = 'rlock';
