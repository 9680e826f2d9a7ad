// The type the admin resource modules register their routes on (apart from index.ts, so they do not import it).
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AdminEnv } from '../context.js';

export type AdminApp = OpenAPIHono<AdminEnv>;
