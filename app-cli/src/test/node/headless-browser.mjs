// A browser without a screen, for the sign-in tests: from an authorization URL it follows redirects by
// hand, keeps cookies, signs in as LOGIN at oidc-provider's development pages (any password) and
// consents, until a redirect leads to the client's redirect URI. Used as a module by
// oauth-login-client.mjs (which takes the code itself), and run directly by the tests of
// `execache login`, where it opens the redirect URI as a browser would, so that execache's loopback
// listener gets the code:
//   node headless-browser.mjs AUTHORIZATION_URL LOGIN   prints {"seen": [...], "callback": STATUS}

/** Signs in; returns the URL the authorization server sent the browser back to, and the pages seen. */
export async function signIn(start, login, isRedirect) {
  const cookies = new Map();
  const seen = [];
  let next = new URL(start);
  let method = 'GET';
  let body;
  for (let step = 0; step < 20; step++) {
    if (isRedirect(next)) {
      return { back: next, seen };
    }
    const response = await fetch(next, {
      method, body, redirect: 'manual',
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    seen.push(`${method} ${next.pathname.replace(/\/[A-Za-z0-9_-]{15,}/g, '/ID')} ${response.status}`);
    if (response.status >= 300 && response.status < 400) {
      next = new URL(response.headers.get('location'), next);
      method = 'GET';
      body = undefined;
      continue;
    }
    const page = await response.text();
    const action = page.match(/<form[^>]*action="([^"]+)"/);
    if (response.status !== 200 || !action) {
      throw new Error(`the sign-in stopped at ${next.pathname} (${response.status}) after ${seen.join(', ')}: ${page.slice(0, 300)}`);
    }
    const fields = new URLSearchParams();
    for (const [input] of page.matchAll(/<input[^>]*>/g)) {
      const name = input.match(/name="([^"]+)"/);
      if (name) fields.set(name[1], input.match(/value="([^"]*)"/)?.[1] ?? '');
    }
    if (fields.has('login')) {
      fields.set('login', login);
      fields.set('password', 'any');
    }
    next = new URL(action[1].replace(/&amp;/g, '&'), next);
    method = 'POST';
    body = fields.toString();
  }
  throw new Error('the sign-in did not come back to the redirect URI');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [start, login] = process.argv.slice(2);
  const issuer = new URL(start).origin;
  try {
    // execache's redirect URI is on loopback, at another port than the authorization server's
    const { back, seen } = await signIn(start, login, (url) => url.origin !== issuer);
    const callback = await fetch(back);
    process.stdout.write(`${JSON.stringify({ seen, callback: callback.status, page: await callback.text() })}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: String(error?.stack ?? error) })}\n`);
  }
}
