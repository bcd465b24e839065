package dev.execache.mcp.server.http;

import dev.execache.mcp.server.http.AccessTokens;
import dev.execache.mcp.server.http.OAuthSettings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** The resource's canonical form and where an issuer's metadata is looked for. */
class OAuthSettingsTest {
    @Test
    void aResourceIsComparedInItsCanonicalForm() {
        assertThat(OAuthSettings.canonical(URI.create("HTTPS://MCP.Example.org:443/mcp")))
                .hasToString("https://mcp.example.org/mcp");
        assertThat(OAuthSettings.canonical(URI.create("https://mcp.example.org/"))).hasToString("https://mcp.example.org");
        assertThat(OAuthSettings.canonical(URI.create("http://127.0.0.1:8080/mcp"))).hasToString("http://127.0.0.1:8080/mcp");
    }

    @Test
    void theIssuersMetadataIsLookedForAtRfc8414sPathThenOpenIdConnects() {
        assertThat(AccessTokens.metadataUrls(URI.create("https://id.example.org"))).extracting(URI::toString)
                .containsExactly("https://id.example.org/.well-known/oauth-authorization-server",
                        "https://id.example.org/.well-known/openid-configuration");
        assertThat(AccessTokens.metadataUrls(URI.create("https://id.example.org/realms/team"))).extracting(URI::toString)
                .containsExactly("https://id.example.org/.well-known/oauth-authorization-server/realms/team",
                        "https://id.example.org/realms/team/.well-known/openid-configuration",
                        "https://id.example.org/.well-known/openid-configuration/realms/team");
        assertThat(AccessTokens.metadataUrls(URI.create("https://tenant.auth0.com/"))).extracting(URI::toString)
                .containsExactly("https://tenant.auth0.com/.well-known/oauth-authorization-server",
                        "https://tenant.auth0.com/.well-known/openid-configuration");
    }

    @Test
    void plainHttpIsTakenOnlyOnLoopback() {
        assertThat(OAuthSettings.of(URI.create("http://localhost:9000"), null).issuer()).hasToString("http://localhost:9000");
        assertThatThrownBy(() -> OAuthSettings.of(URI.create("http://id.example.org"), null))
                .hasMessageContaining("must use https");
        assertThatThrownBy(() -> OAuthSettings.of(URI.create("https://id.example.org?x=1"), null))
                .hasMessageContaining("must not have a query");
    }
}
