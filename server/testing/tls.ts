import https from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * A self-signed certificate for 127.0.0.1 and localhost (P-256, valid until 2126), for tests that
 * need an https server: a fetcher trusts it by taking `TEST_TLS.cert` as its only root (`ca`).
 * Test material only: it protects nothing and must never serve anything outside a test.
 */
export const TEST_TLS = {
  cert: `-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUXExIzq4T5QvEADcJjpPNtiwCsYgwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyNzEyMzg0OVoYDzIxMjYxMTAz
MTIzODQ5WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQhoYZTbDoqXIh1++oe2Xf47knmSuiqdD8Otmj/q8aqHEkB8vdI8+ip
/M7D3UO4Hnd+9ld/cBnNwLfYTND3HZLqo28wbTAdBgNVHQ4EFgQUFrbiW/Og5v/A
iuplt7Fg56Z6OigwHwYDVR0jBBgwFoAUFrbiW/Og5v/Aiuplt7Fg56Z6OigwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
zj0EAwIDSAAwRQIhAJil7bR3F1znqUbSWRrSJE+8o6T/ceYMY+bYkMMvErruAiAR
/C5TG/aJhzSp70yXElar/VRZB4wMifkvS9eL3WIMVg==
-----END CERTIFICATE-----
`,
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgcFva1uiijip912VP
yR7oMGbOV8OLbXeFxki/7t3fz8GhRANCAAQhoYZTbDoqXIh1++oe2Xf47knmSuiq
dD8Otmj/q8aqHEkB8vdI8+ip/M7D3UO4Hnd+9ld/cBnNwLfYTND3HZLq
-----END PRIVATE KEY-----
`,
};

/** An https server on 127.0.0.1 with TEST_TLS, its origin (`https://127.0.0.1:port`) and a close that ends its connections. */
export async function startHttpsServer(
  handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void,
): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = https.createServer({ cert: TEST_TLS.cert, key: TEST_TLS.key }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
