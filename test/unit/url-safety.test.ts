// O15: endpoint URLs are https and public-only unless the profile allows local development targets.
import { describe, expect, it } from 'vitest';
import { checkEndpointUrl, isForbiddenAddress, UnsafeUrlError, vetEndpointUrl, type LookupAll } from '../../src/outbound/url-safety.js';

async function reasonOf(promise: Promise<void>): Promise<string | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    expect(error).toBeInstanceOf(UnsafeUrlError);
    return (error as UnsafeUrlError).reason;
  }
}

const strict = { allowInsecure: false };
const local = { allowInsecure: true };

describe('checkEndpointUrl (O15)', () => {
  const cases: Array<[string, string]> = [
    // allowed: public IP literals over https
    ['https://93.184.216.34/webhooks', 'ok'],
    ['https://8.8.8.8:8443/hook?x=1', 'ok'],
    ['https://[2606:4700:4700::1111]/hook', 'ok'],
    ['https://172.32.0.1/', 'ok'], // just outside 172.16/12
    ['https://100.128.0.1/', 'ok'], // just outside 100.64/10
    // scheme
    ['http://93.184.216.34/webhooks', 'scheme_not_allowed'],
    ['ftp://93.184.216.34/', 'scheme_not_allowed'],
    ['file:///etc/passwd', 'scheme_not_allowed'],
    ['not a url', 'invalid_url'],
    ['/relative/path', 'invalid_url'],
    ['https://user:pw@93.184.216.34/', 'credentials_in_url'],
    // loopback
    ['https://127.0.0.1/', 'forbidden_address'],
    ['https://127.9.9.9/', 'forbidden_address'],
    ['https://localhost/', 'forbidden_address'],
    ['https://[::1]/', 'forbidden_address'],
    ['https://2130706433/', 'forbidden_address'], // 127.0.0.1 as an integer
    ['https://0x7f000001/', 'forbidden_address'],
    // private
    ['https://10.1.2.3/', 'forbidden_address'],
    ['https://172.16.0.1/', 'forbidden_address'],
    ['https://172.31.255.255/', 'forbidden_address'],
    ['https://192.168.1.1/', 'forbidden_address'],
    // CGNAT, link-local, this-network, multicast, reserved
    ['https://100.64.0.1/', 'forbidden_address'],
    ['https://100.127.255.255/', 'forbidden_address'],
    ['https://169.254.169.254/latest/meta-data', 'forbidden_address'],
    ['https://0.0.0.0/', 'forbidden_address'],
    ['https://0.1.2.3/', 'forbidden_address'],
    ['https://224.0.0.1/', 'forbidden_address'],
    ['https://239.255.255.250/', 'forbidden_address'],
    ['https://255.255.255.255/', 'forbidden_address'],
    // IPv6 link-local, unique-local, multicast, unspecified
    ['https://[fe80::1]/', 'forbidden_address'],
    ['https://[febf::1]/', 'forbidden_address'],
    ['https://[fc00::1]/', 'forbidden_address'],
    ['https://[fd12:3456::1]/', 'forbidden_address'],
    ['https://[ff02::1]/', 'forbidden_address'],
    ['https://[::]/', 'forbidden_address'],
    // IPv4-mapped IPv6 of forbidden addresses
    ['https://[::ffff:127.0.0.1]/', 'forbidden_address'],
    ['https://[::ffff:10.0.0.1]/', 'forbidden_address'],
    ['https://[::ffff:169.254.169.254]/', 'forbidden_address'],
    ['https://[::ffff:192.168.0.1]/', 'forbidden_address'],
    // R7: every other IPv6 spelling of a private or loopback address
    ['https://[::127.0.0.1]/', 'forbidden_address'], // IPv4-compatible (the URL parser writes it [::7f00:1])
    ['https://[::7f00:1]/', 'forbidden_address'],
    ['https://[::8.8.8.8]/', 'forbidden_address'], // IPv4-compatible is deprecated: refused whatever it embeds
    ['https://[::ffff:7f00:1]/', 'forbidden_address'], // IPv4-mapped in hex
    ['https://[0:0:0:0:0:ffff:a9fe:a9fe]/', 'forbidden_address'], // 169.254.169.254, written out in full
    ['https://[::FFFF:C0A8:0001]/', 'forbidden_address'], // upper case, leading zeros
    ['https://[::ffff:0:10.0.0.1]/', 'forbidden_address'], // IPv4-translated (SIIT)
    ['https://[2002:7f00:1::]/', 'forbidden_address'], // 6to4 of 127.0.0.1
    ['https://[2002:c0a8:101::1]/', 'forbidden_address'], // 6to4 of 192.168.1.1
    ['https://[64:ff9b::10.0.0.1]/', 'forbidden_address'], // NAT64 well-known prefix, private IPv4
    ['https://[64:ff9b::a9fe:a9fe]/', 'forbidden_address'],
    ['https://[64:ff9b:1::808:808]/', 'forbidden_address'], // NAT64 local-use prefix: refused whole
    ['https://[fec0::1]/', 'forbidden_address'], // site-local
    ['https://[feff::1]/', 'forbidden_address'],
    ['https://[2001:db8::1]/', 'forbidden_address'], // documentation
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'forbidden_address'], // Teredo
    // ... while the same forms of a public address are fine
    ['https://[::ffff:8.8.8.8]/', 'ok'],
    ['https://[64:ff9b::8.8.8.8]/', 'ok'], // DNS64 in an IPv6-only network reaching an IPv4-only merchant
    ['https://[2002:808:808::1]/', 'ok'],
    ['https://[2a00:1450:4001:81c::200e]/', 'ok'],
  ];
  it.each(cases)('O15 strict profile: %s → %s', async (url, expected) => {
    expect(await reasonOf(checkEndpointUrl(url, strict))).toBe(expected);
  });

  const localCases: Array<[string, string]> = [
    ['http://127.0.0.1:4200/hook', 'ok'],
    ['http://localhost:4200/hook', 'ok'],
    ['https://10.0.0.5/hook', 'ok'],
    ['http://[::1]:4200/', 'ok'],
    ['ftp://127.0.0.1/', 'scheme_not_allowed'],
    ['nonsense', 'invalid_url'],
  ];
  it.each(localCases)('O15 allow_insecure_urls: %s → %s', async (url, expected) => {
    expect(await reasonOf(checkEndpointUrl(url, local))).toBe(expected);
  });

  it('O15 a name is refused if ANY of its addresses is private (one bad A record is enough)', async () => {
    const lookup: LookupAll = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    const error = await checkEndpointUrl('https://merchant.example/hook', { allowInsecure: false, lookup }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeUrlError);
    expect((error as UnsafeUrlError).reason).toBe('forbidden_address');
    expect((error as Error).message).toContain('10.0.0.7');
  });

  it('O15 a name resolving only to public addresses is accepted; one that does not resolve is refused', async () => {
    const publicLookup: LookupAll = async () => [{ address: '2606:4700::6810:84e5', family: 6 }];
    await expect(checkEndpointUrl('https://merchant.example/hook', { allowInsecure: false, lookup: publicLookup })).resolves.toBeUndefined();
    const failing: LookupAll = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect(await reasonOf(checkEndpointUrl('https://nowhere.invalid/', { allowInsecure: false, lookup: failing }))).toBe('unresolvable_host');
    expect(await reasonOf(checkEndpointUrl('https://nowhere.invalid/', { allowInsecure: false, lookup: async () => [] }))).toBe('unresolvable_host');
  });

  it.each([
    ['::ffff:7f00:1', true],
    ['64:ff9b::a00:1', true],
    ['64:ff9b::808:808', false],
    ['2001:4860:4860::8888', false],
    ['not-an-ip', true],
    ['fe80::1%eth0', true], // a zone: link-local by nature
    ['::ffff:127.0.0.1', true],
    ['::127.0.0.1', true],
    ['fec0::5', true],
    ['2606:4700:4700::1111', false],
  ])('O15 isForbiddenAddress(%s) = %s', (address, expected) => {
    expect(isForbiddenAddress(address)).toBe(expected);
  });
});

describe('vetEndpointUrl (O15, send time)', () => {
  it('O15 returns the addresses it vetted, so the POST can connect to exactly those', async () => {
    const lookup: LookupAll = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::6810:84e5', family: 6 },
    ];
    expect(await vetEndpointUrl('https://merchant.example/hook', { allowInsecure: false, lookup })).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::6810:84e5', family: 6 },
    ]);
    expect(await vetEndpointUrl('https://[2606:4700:4700::1111]/hook', strict)).toEqual([{ address: '2606:4700:4700::1111', family: 6 }]);
  });

  it('O15 refuses exactly what checkEndpointUrl refuses in a strict profile', async () => {
    const privateLookup: LookupAll = async () => [{ address: '10.0.0.7', family: 4 }];
    expect(await reasonOf(vetEndpointUrl('https://merchant.example/', { allowInsecure: false, lookup: privateLookup }).then(() => {}))).toBe('forbidden_address');
    expect(await reasonOf(vetEndpointUrl('https://nowhere.invalid/', { allowInsecure: false, lookup: async () => [] }).then(() => {}))).toBe('unresolvable_host');
    expect(await reasonOf(vetEndpointUrl('http://93.184.216.34/', strict).then(() => {}))).toBe('scheme_not_allowed');
  });

  it('O15 allow_insecure_urls: resolves and pins local targets too; a name that does not resolve is left to the POST', async () => {
    const loopback: LookupAll = async () => [{ address: '127.0.0.1', family: 4 }];
    expect(await vetEndpointUrl('http://receiver.local:4200/hook', { allowInsecure: true, lookup: loopback })).toEqual([{ address: '127.0.0.1', family: 4 }]);
    const failing: LookupAll = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect(await vetEndpointUrl('http://receiver.local:4200/hook', { allowInsecure: true, lookup: failing })).toBeNull();
    // Registration under allow_insecure_urls does not resolve at all (a dev receiver may not be up yet).
    let asked = 0;
    await checkEndpointUrl('http://receiver.local:4200/hook', { allowInsecure: true, lookup: async () => (asked++, []) });
    expect(asked).toBe(0);
  });
});
