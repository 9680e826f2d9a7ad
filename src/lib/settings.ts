// Parses environment and profile once per process; a bad value exits with one line naming the key (R9).
import { parseEnv, type Env } from '../config/env.js';
import { loadProfile, type Profile } from '../config/profile.js';
import { EnvError } from '../config/env.js';
import { EXIT_CONFIG, failStartup } from './startup.js';

export interface Settings {
  env: Env;
  profile: Profile;
}

/** R9: a bad variable or profile stops `processName` with one line naming it and the fix. */
export function loadSettings(processName: string): Settings {
  try {
    return { env: parseEnv(), profile: loadProfile() };
  } catch (error) {
    const line =
      error instanceof EnvError
        ? error.oneLine
        : `${(error as Error).message}; fix: correct the profile (APIPAY_PROFILE) or set the environment variables it names`;
    failStartup(processName, line, EXIT_CONFIG);
  }
}
