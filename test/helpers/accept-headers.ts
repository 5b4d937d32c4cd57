// The Accept headers browsers send today for an image (an <img>, and a tab opening an image's URL), and curl's.
export const ACCEPT_HEADERS = {
  chrome: 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8',
  chromeTab: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  firefox: 'image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5',
  firefox115: 'image/avif,image/webp,*/*',
  safari17: 'image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5',
  safari15: 'image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5',
  curl: '*/*',
} as const;

