-- A15, A16: portal links and console/portal sessions kept server-side, so a link is single-use and revocable and a
-- session ends at once on sign-out, revocation or a role change (issue 23). A link records who minted it and with
-- which role: its sessions may do only what that minter may do for the account.
CREATE TABLE "portal_links" (
  "id" text PRIMARY KEY NOT NULL,
  "merchant_account" text NOT NULL,
  "created_by" text NOT NULL,
  "created_by_name" text NOT NULL,
  "created_by_role" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "expires_at" timestamp with time zone NOT NULL,
  "used_at" timestamp with time zone,
  "revoked_at" timestamp with time zone,
  "revoked_by" text,
  CONSTRAINT "portal_links_role_ck" CHECK ("created_by_role" in ('operator', 'admin')),
  CONSTRAINT "portal_links_revoked_ck" CHECK (("revoked_at" is null) = ("revoked_by" is null))
);
--> statement-breakpoint
CREATE INDEX "portal_links_merchant_idx" ON "portal_links" USING btree ("merchant_account");
--> statement-breakpoint
CREATE TABLE "console_sessions" (
  "id" text PRIMARY KEY NOT NULL,
  "surface" text NOT NULL,
  "subject" text NOT NULL,
  "key_id" text NOT NULL,
  "role" text NOT NULL,
  "portal_link_id" text REFERENCES "portal_links"("id"),
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "expires_at" timestamp with time zone NOT NULL,
  "ended_at" timestamp with time zone,
  "ended_reason" text,
  CONSTRAINT "console_sessions_surface_ck" CHECK ("surface" in ('console', 'portal')),
  CONSTRAINT "console_sessions_subject_ck" CHECK ("subject" in ('key', 'bootstrap', 'link')),
  CONSTRAINT "console_sessions_link_ck" CHECK (("subject" = 'link') = ("portal_link_id" is not null)),
  CONSTRAINT "console_sessions_ended_ck" CHECK (("ended_at" is null) = ("ended_reason" is null))
);
--> statement-breakpoint
CREATE INDEX "console_sessions_key_idx" ON "console_sessions" USING btree ("key_id") WHERE "ended_at" is null;
--> statement-breakpoint
CREATE INDEX "console_sessions_link_idx" ON "console_sessions" USING btree ("portal_link_id") WHERE "ended_at" is null;
