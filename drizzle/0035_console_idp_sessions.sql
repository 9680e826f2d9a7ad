-- A30 (issue 29): a console session may stand for a person of the identity provider (signed in by OpenID Connect
-- authorization code + PKCE). The row keeps who the ID token named (subject key idp:<sub>@<issuer>, name, e-mail,
-- groups, amr, acr, auth_time) so each request knows the person without a token in the cookie. Additive.
ALTER TABLE "console_sessions" DROP CONSTRAINT "console_sessions_subject_ck";
--> statement-breakpoint
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_subject_ck" CHECK ("subject" in ('key', 'bootstrap', 'link', 'idp'));
--> statement-breakpoint
ALTER TABLE "console_sessions" ADD COLUMN "idp_principal" jsonb;
--> statement-breakpoint
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_idp_ck" CHECK (("subject" = 'idp') = ("idp_principal" is not null));
