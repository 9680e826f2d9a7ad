// Inbound traffic of the soak (R11): the provider sandbox (in this process) sends signed webhooks at a steady rate;
// its payments API answers, fails (503 for some references, an error rate in some windows) and times out (latency
// past the client's timeout in other windows). A webhook not answered 200 is sent again, as providers do.
import type { Profile } from '../../src/config/profile.js';
import { sandboxProvidersFromProfile, startProviderSandbox, type ProviderSandbox } from '../../src/sandbox/provider.js';
import { pick, type Random } from './random.js';

export interface AckedWebhook {
  provider: string;
  eventId: string;
  reference: string;
}

export interface InboundTraffic {
  sandbox: ProviderSandbox;
  acked: AckedWebhook[];
  /** Sent and never answered 200 within the resend window (the provider would keep trying). */
  unacked: AckedWebhook[];
  sent: number;
  modes: string[];
  /** Stops producing new webhooks and waits for the resends in flight. */
  stop(): Promise<void>;
}

const MODES = [
  { name: 'answering', switches: { errorRate: 0, latencyMs: 0 } },
  { name: 'answering', switches: { errorRate: 0, latencyMs: 0 } },
  { name: 'failing 50%', switches: { errorRate: 0.5, latencyMs: 0 } },
  { name: 'timing out', switches: { errorRate: 0, latencyMs: 11_000 } }, // past the provider client's 10 s timeout
] as const;

export async function startInboundTraffic(options: {
  profile: Profile;
  port: number;
  ingressUrl: string;
  ratePerS: number;
  random: Random;
  seed: number;
  resendForMs?: number;
  /** P6's drill: the payments API always answers (no failing, timing-out windows, no payment failing for good). */
  providerAnswering?: boolean;
}): Promise<InboundTraffic> {
  const providers = sandboxProvidersFromProfile(options.profile);
  const sandbox = await startProviderSandbox({ port: options.port, host: '127.0.0.1', ingressUrl: options.ingressUrl, providers });
  const { random } = options;
  const acked: AckedWebhook[] = [];
  const unacked: AckedWebhook[] = [];
  const inFlight = new Set<Promise<void>>();
  const modes: string[] = [];
  let sent = 0;

  const send = async (hook: AckedWebhook) => {
    const deadline = Date.now() + (options.resendForMs ?? 60_000);
    for (;;) {
      const result = await sandbox.sendWebhook(hook.provider, { id: hook.eventId, type: 'payment.succeeded', reference: hook.reference });
      if (result.deliveries[0]?.status === 200) return void acked.push(hook);
      if (Date.now() > deadline) return void unacked.push(hook);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  };
  const tick = () => {
    sent += 1;
    const provider = pick(random, providers).name;
    const hook = { provider, eventId: `evt_soak_${options.seed}_${sent}`, reference: `pay_soak_${options.seed}_${sent}` };
    sandbox.upsertPayment(provider, hook.reference, {
      status: 'succeeded',
      amountMinor: 100 + Math.floor(random() * 100_000),
      currency: pick(random, ['EUR', 'USD', 'GBP']),
    });
    if (!options.providerAnswering && random() < 0.1) sandbox.setPaymentFailing(provider, hook.reference); // answers 503 for good: manual review
    const p = send(hook).finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const switchMode = () => {
    const mode = options.providerAnswering ? MODES[0] : pick(random, MODES);
    modes.push(mode.name);
    sandbox.setSwitches(mode.switches);
  };
  switchMode();
  const traffic = setInterval(tick, 1_000 / options.ratePerS);
  const modeTimer = setInterval(switchMode, 15_000);
  return {
    sandbox,
    acked,
    unacked,
    get sent() {
      return sent;
    },
    modes,
    async stop() {
      clearInterval(traffic);
      clearInterval(modeTimer);
      sandbox.setSwitches({ errorRate: 0, latencyMs: 0 }); // the settle period: the provider answers again
      await Promise.all([...inFlight]);
    },
  };
}
