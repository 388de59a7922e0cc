export const placeholder = 'redlock';
