package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * What a sign-in asks for. The flows themselves run against real authorization servers: oidc-provider
 * (UrlServerSignInIT) and the conformance suite's (ClientConformanceIT, its auth scenarios).
 */
class PersonSignInTest {
    @Test
    void aSignInForMoreScopeKeepsTheScopeSignedInWithFirst() {
        assertThat(PersonSignIn.union("mcp:basic", "mcp:write")).isEqualTo("mcp:basic mcp:write");
        assertThat(PersonSignIn.union("mcp:basic mcp:write", "mcp:write  mcp:basic")).isEqualTo("mcp:basic mcp:write");
        assertThat(PersonSignIn.union(null, "mcp:basic")).isEqualTo("mcp:basic");
    }

    @Test
    void onlyAnHttpsUrlWithAPathNamesAClientIdMetadataDocument() {
        assertThat(PersonSignIn.metadataDocument("https://tools.example.com/execache/client.json")).isTrue();
        assertThat(PersonSignIn.metadataDocument("execache-desktop")).isFalse();
        assertThat(PersonSignIn.metadataDocument("http://tools.example.com/client.json")).as("not https").isFalse();
        assertThat(PersonSignIn.metadataDocument("https://tools.example.com/")).as("no path").isFalse();
        assertThat(PersonSignIn.metadataDocument("https://tools.example.com")).as("no path").isFalse();
        assertThat(PersonSignIn.metadataDocument("not a url at all")).isFalse();
    }
}
