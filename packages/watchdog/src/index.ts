export const placeholder = 'watchdog';
