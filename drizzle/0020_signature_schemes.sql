-- O16-O18: each endpoint signs with the ApiPay-Signature scheme (the default) or Standard Webhooks; an endpoint
-- with a signing public key also signs v1a (ed25519), the whsk_ keys sealed in endpoint_secrets (kind ed25519)
-- beside the whsec_ ones (kind hmac). Defaults only: no table rewrite, existing endpoints keep signing as before.
ALTER TABLE "webhook_endpoints" ADD COLUMN "signature_scheme" text DEFAULT 'apipay' NOT NULL;
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_signature_scheme_check" CHECK ("signature_scheme" in ('apipay', 'standard')) NOT VALID;
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "signing_public_key" text;
--> statement-breakpoint
ALTER TABLE "endpoint_secrets" ADD COLUMN "kind" text DEFAULT 'hmac' NOT NULL;
