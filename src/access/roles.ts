// Who may do what on the admin API (A1, A15): four roles, the principal a credential stands for, and the access rule
// every admin route declares; A26: the identity provider's person behind a token. Pure: no framework, no database.

/** viewer < operator < admin are staff roles, each including the one before; merchant is one account's own key. */
export const ROLES = ['viewer', 'operator', 'admin', 'merchant'] as const;
export type Role = (typeof ROLES)[number];
export type StaffRole = Exclude<Role, 'merchant'>;

const STAFF_RANK: Record<StaffRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** The authenticated caller, set on the request context and handed to services explicitly. */
export interface Principal {
  /** apk_… of an API key, or `bootstrap` for the ADMIN_TOKEN. */
  keyId: string;
  name: string;
  role: Role;
  /** Set exactly when role is merchant: the one account whose objects exist for this principal. */
  merchantAccount: string | null;
  /**
   * A15: a portal link's session is a merchant principal that may do only what the link's minter may: allowed routes
   * are the merchant's, cut down to this staff role (an operator's link cannot rotate a secret). Unset: no ceiling.
   */
  ceiling?: StaffRole;
  /** The request this principal acts in (the server's X-Request-Id), set by the admin authentication: the audit log's (A3). */
  requestId?: string;
  /** A24: the X-Request-Id the client sent, kept beside the server's in audit rows (never instead of it). */
  clientRequestId?: string;
  /** A12: the person (principals row) the key belongs to, and every key id of that person. */
  personId?: string;
  personKeys?: string[];
  /** A26: set exactly when the credential was the identity provider's token: the person as the IdP says. */
  idp?: IdpIdentity;
}

/** The person behind a verified token, as the principal carries it (A26, A27). */
export interface IdpIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  groups: string[];
  /** RFC 8176 authentication methods of the sign-in (e.g. pwd, otp). */
  amr: string[];
  acr: string | null;
  /** When the person last actively signed in (seconds since the epoch), if the IdP says. */
  authTime: number | null;
}


export const BOOTSTRAP_KEY_ID = 'bootstrap';
export const BOOTSTRAP_PRINCIPAL: Principal = Object.freeze({ keyId: BOOTSTRAP_KEY_ID, name: 'ADMIN_TOKEN', role: 'admin', merchantAccount: null });

/**
 * What one route needs: the least staff role, and whether a merchant key may call it (on its own objects only:
 * another merchant's ids answer 404, because for that key they do not exist).
 */
export interface Access {
  role: StaffRole;
  merchant: boolean;
}

export function allows(access: Access, principal: Principal): boolean {
  if (principal.role === 'merchant')
    return access.merchant && (principal.ceiling === undefined || STAFF_RANK[principal.ceiling] >= STAFF_RANK[access.role]);
  return STAFF_RANK[principal.role] >= STAFF_RANK[access.role];
}

/** Raw bodies (event bodies, merchant response excerpts) are hidden from viewers; everyone else may see them. */
export const seesRawBodies = (principal: Principal) => principal.role !== 'viewer';

/** The account a principal is confined to, or undefined for staff (every account). */
export const scopeOf = (principal: Principal): string | undefined => (principal.role === 'merchant' ? principal.merchantAccount! : undefined);
