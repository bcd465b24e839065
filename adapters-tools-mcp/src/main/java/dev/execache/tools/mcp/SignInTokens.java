package dev.execache.tools.mcp;

import dev.execache.tools.mcp.HttpMcpException.Kind;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The access token of a person's sign-in to a url server ({@link PersonSignIn}), as kept by
 * {@link SignIns}: read from its file (so that a sign-in made by another process is seen), renewed
 * with the refresh token a minute before it expires or when the server refuses it, and the renewed
 * tokens kept. A sign-in that cannot be renewed any more says how to sign in again.
 */
final class SignInTokens {
    private final UrlServerSettings settings;
    private final SignIns store;
    private final Clock clock;
    private final OAuthDiscovery endpoints;

    SignInTokens(UrlServerSettings settings, SignIns store, HttpClient http, Clock clock, Duration timeout) {
        this.settings = settings;
        this.store = store;
        this.clock = clock;
        this.endpoints = new OAuthDiscovery(settings.name(), http, timeout);
    }

    /** Whom the sign-in names and since when, so that a new sign-in is told from the one a connection was made with; null for none. */
    String who() {
        SignIns.SignIn signIn = store.find(settings.url());
        return signIn == null ? null : signIn.account() + "@" + signIn.issuer() + "@" + signIn.signedInAt().getEpochSecond();
    }

    /** The account the sign-in names, or null without one. */
    String account() {
        SignIns.SignIn signIn = store.find(settings.url());
        return signIn == null ? null : signIn.account();
    }

    /** An access token that is not about to expire, or null when the person has not signed in. */
    String token() {
        SignIns.SignIn signIn = store.find(settings.url());
        if (signIn == null) {
            return null;
        }
        if (fresh(signIn)) {
            return signIn.accessToken();
        }
        SignIns.SignIn renewed = renew(false, signIn.accessToken(), null);
        return renewed == null ? null : renewed.accessToken();
    }

    /**
     * The server refused the request (401): without a sign-in that is the person's to make, so this
     * throws saying how; with one, its access token is renewed and the request may be sent again.
     */
    boolean refused(String challenge) {
        SignIns.SignIn signIn = store.find(settings.url());
        if (signIn == null) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, 401, null, challenge, "server " + settings.name()
                    + " asks you to sign in: run 'execache login " + settings.name() + "'");
        }
        return renew(true, signIn.accessToken(), challenge) != null;
    }

    private boolean fresh(SignIns.SignIn signIn) {
        return signIn.accessToken() != null
                && clock.instant().isBefore(signIn.expiresAt().minus(ClientCredentialsTokens.RENEW_MARGIN));
    }

    /**
     * Renews the access token, unless another thread or process did meanwhile ({@code refused}: the
     * token kept is no longer the one refused, with {@code challenge}; otherwise: it is fresh again).
     */
    private SignIns.SignIn renew(boolean refused, String had, String challenge) {
        return store.locked(settings.url(), () -> {
            SignIns.SignIn current = store.find(settings.url());
            if (current == null) {
                return null;
            }
            if (refused ? !Objects.equals(current.accessToken(), had) : fresh(current)) {
                return current;
            }
            if (current.refreshToken() == null) {
                throw expired(challenge);
            }
            endpoints.requireSafe(current.tokenEndpoint(), "token endpoint", "the refresh token");
            Map<String, String> form = new LinkedHashMap<>();
            form.put("grant_type", "refresh_token");
            form.put("refresh_token", current.refreshToken());
            form.put("resource", current.resource().toString());
            Instant asked = clock.instant();
            OAuthDiscovery.Answer answer = endpoints.postForm(current.tokenEndpoint(), form,
                    PersonSignIn.authenticate(form, current.clientId(), current.clientSecret(), current.clientAuth()),
                    "token endpoint");
            if (answer.status() == 400 || answer.status() == 401) {
                throw expired(challenge);
            }
            if (!answer.ok() || !answer.body().path("access_token").isTextual()) {
                throw new HttpMcpException(Kind.UNREACHABLE, answer.status(), null, "server " + settings.name()
                        + ": renewing your sign-in failed at its token endpoint (HTTP " + answer.status()
                        + (answer.error() == null ? "" : ", " + answer.error()) + "); execache tries again on the next call");
            }
            SignIns.SignIn renewed = current.withTokens(answer.body().get("access_token").asText(),
                    answer.body().path("refresh_token").isTextual() ? answer.body().get("refresh_token").asText() : null,
                    asked.plusSeconds(answer.body().path("expires_in").asLong(3600)));
            store.save(settings.url(), renewed);
            return renewed;
        });
    }

    /** The sign-in cannot be renewed; {@code challenge}: the server's WWW-Authenticate that refused it, or null. */
    private HttpMcpException expired(String challenge) {
        return new HttpMcpException(Kind.CREDENTIALS_REFUSED, 401, null, challenge, "server " + settings.name()
                + ": your sign-in has expired or was revoked; sign in again with 'execache login " + settings.name() + "'");
    }

    /** The URL the sign-in is kept for. */
    URI url() {
        return settings.url();
    }
}
