// autocannon ships no types; the part of its programmatic API that bench/http.ts uses.
declare module 'autocannon' {
  interface Histogram {
    p50: number;
    p99: number;
    average: number;
  }
  interface Result {
    start: Date | string;
    finish: Date | string;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats?: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { total: number };
  }
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer | string;
    connections?: number;
    amount?: number;
    duration?: number;
    timeout?: number;
    sampleInt?: number;
    /** Requests in turn; setupRequest may change each one (bench/http-dialects.ts: the path). */
    requests?: Array<{ method?: string; setupRequest?: (request: Record<string, unknown>) => Record<string, unknown> }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
