// The provider and secret bench:ingress signs its webhooks with and the ingress under benchmark accepts.
export const BENCH_PROVIDER = 'bench-stripe';
export const BENCH_SECRET = 'whsec_bench_0123456789abcdef';
