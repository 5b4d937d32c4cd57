// Progress of one download: on a terminal a bar redrawn in place (at most every 100 ms);
// otherwise (a pipe, a log, CI) a plain line at each quarter.

export interface DownloadProgress {
  update(received: number, total: number | undefined): void;
  finish(): void;
}

export function downloadProgress(label: string, options: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}): DownloadProgress {
  const stream = options.stream ?? process.stderr;
  if (options.quiet) return { update() {}, finish() {} };
  if (!stream.isTTY) {
    let quarter = 0;
    return {
      update(received, total) {
        if (!total) return;
        const now = Math.floor((4 * received) / total);
        if (now <= quarter) return;
        quarter = now;
        stream.write(`models: ${label}: ${25 * Math.min(now, 4)}% (${formatBytes(received)} of ${formatBytes(total)})\n`);
      },
      finish() {},
    };
  }
  let drawn = 0;
  return {
    update(received, total) {
      const now = Date.now();
      if (now - drawn < 100 && received !== total) return;
      drawn = now;
      const columns = stream.columns || 80;
      const width = Math.max(10, Math.min(30, columns - 50));
      const share = total ? Math.min(1, received / total) : 0;
      const filled = Math.round(share * width);
      const bar = total ? `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(share * 100)}% ` : '';
      const text = `${bar}${formatBytes(received)}${total ? ` of ${formatBytes(total)}` : ''}  ${label}`;
      stream.write(`\r\x1b[K${text.slice(0, columns - 1)}`);
    },
    finish() {
      stream.write('\r\x1b[K');
    },
  };
}

function formatBytes(bytes: number): string {
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
