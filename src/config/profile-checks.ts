// The profile's rules across keys (R7, A22, R3, P1, A31), checked once the schema has parsed it: each answer is
// one line naming the key, what it must be and why. Structural input, so that src/config/profile.ts (the schema)
// imports this file and not the other way round.

export interface CrossChecked {
  idp?: unknown;
  inbound: { dual_control_above: Record<string, bigint>; dual_control_default_major?: unknown; resolution_via_temporal: string };
  outbound: {
    allow_insecure_urls: boolean;
    request_timeout: number;
    in_flight_lease: number;
    batched: { handoff_grace: number };
  };
}

/** The first broken rule as `key: message`, or null. */
export function crossKeyProblem(data: CrossChecked, nodeEnv: string | undefined): string | null {
  const production = nodeEnv === 'production';
  if (production && data.outbound.allow_insecure_urls) {
    // R7: http and loopback/private targets are for a developer's receiver, never for a production worker (SSRF).
    return 'outbound.allow_insecure_urls: must be false when NODE_ENV=production (it allows http and private, loopback and link-local endpoint URLs); set it to false or use a development profile';
  }
  const { dual_control_above, dual_control_default_major, resolution_via_temporal } = data.inbound;
  if (production && Object.keys(dual_control_above).length === 0 && dual_control_default_major === undefined) {
    // A22: limits fail closed: a production process with none would let one operator post any amount alone.
    return 'inbound.dual_control_default_major: must be set when NODE_ENV=production and inbound.dual_control_above names no currency (without a limit one operator posts any amount alone); set it, e.g. dual_control_default_major: 1000';
  }
  if (resolution_via_temporal === 'idp' && data.idp === undefined) {
    // A31: the stamped identity names a subject of the profile's issuer; without one there is nobody to name.
    return 'inbound.resolution_via_temporal: idp needs the idp block (the issuer whose subjects the Temporal server stamps)';
  }
  const { batched, request_timeout, in_flight_lease } = data.outbound;
  if (in_flight_lease <= request_timeout) {
    // R3: a lease shorter than a POST would let a retry mark a live execution's attempt interrupted and POST again.
    return 'outbound.in_flight_lease: must be longer than outbound.request_timeout';
  }
  if (batched.handoff_grace <= request_timeout) {
    // P1: the sweep must never take over a first attempt that a live dispatcher is still sending.
    return 'outbound.batched.handoff_grace: must be longer than outbound.request_timeout';
  }
  return null;
}
