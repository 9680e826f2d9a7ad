// Parses environment and profile once per process; a bad value exits with a message naming the key.
import { parseEnv, type Env } from '../config/env.js';
import { loadProfile, type Profile } from '../config/profile.js';
import { exitOnConfigError } from './shutdown.js';

export interface Settings {
  env: Env;
  profile: Profile;
}

export function loadSettings(): Settings {
  try {
    return { env: parseEnv(), profile: loadProfile() };
  } catch (error) {
    exitOnConfigError(error);
  }
}
