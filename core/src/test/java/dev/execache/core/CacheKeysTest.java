package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CacheKeysTest {

    private static String key(String code, Object context, Map<String, String> tools) {
        return CacheKeys.forExecution(code, CanonicalJson.write(context, "context"), tools);
    }

    @Test
    void executionKeyHasTheVersionPrefixAndThreeHashes() {
        assertThat(key("return 1", Map.of(), Map.of())).matches("v1:[0-9a-f]{32}_[0-9a-f]{32}_[0-9a-f]{32}");
    }

    @Test
    void contextKeyOrderDoesNotChangeTheKey() {
        Map<String, Object> ab = new LinkedHashMap<>();
        ab.put("a", 1);
        ab.put("b", Map.of("y", 2, "x", 1.0));
        Map<String, Object> ba = new LinkedHashMap<>();
        ba.put("b", Map.of("x", 1, "y", 2));
        ba.put("a", 1.0);

        assertThat(key("c", ab, Map.of())).isEqualTo(key("c", ba, Map.of()));
    }

    @Test
    void codeContextAndToolVersionsEachChangeTheKey() {
        String base = key("return 1", Map.of("a", 1), Map.of("github", "v1"));

        assertThat(key("return 2", Map.of("a", 1), Map.of("github", "v1"))).isNotEqualTo(base);
        assertThat(key("return 1", Map.of("a", 2), Map.of("github", "v1"))).isNotEqualTo(base);
        assertThat(key("return 1", Map.of("a", 1), Map.of("github", "v2"))).isNotEqualTo(base);
        assertThat(key("return 1", Map.of("a", 1), Map.of())).isNotEqualTo(base);
    }

    @Test
    void theIdentitiesOfTheServersCodeMayCallChangeTheKeyAndNoServersLeaveItAsItWas() {
        String context = CanonicalJson.write(Map.of(), "context");
        String none = CacheKeys.forExecution("c", context, Map.of(), CacheKeys.serversDigest(Map.of()));
        String alice = CacheKeys.forExecution("c", context, Map.of(), CacheKeys.serversDigest(Map.of("acct", "a1")));

        assertThat(none).isEqualTo(key("c", Map.of(), Map.of()));
        assertThat(alice).isNotEqualTo(none)
                .isNotEqualTo(CacheKeys.forExecution("c", context, Map.of(), CacheKeys.serversDigest(Map.of("acct", "b2"))))
                .isEqualTo(CacheKeys.forExecution("c", context, Map.of(), CacheKeys.serversDigest(Map.of("acct", "a1"))))
                .matches("v1:[0-9a-f]{32}_[0-9a-f]{32}_[0-9a-f]{32}");
    }

    @Test
    void toolCallKeyNamesTheToolSoItCanBeClearedByGlob() {
        String key = CacheKeys.forToolCall("read", "{\"path\":\"a\"}", "1");

        assertThat(key).matches("v1:read:[0-9a-f]{32}");
        assertThat(Glob.of(CacheKeys.toolCallPattern("re*")).matches(key)).isTrue();
        assertThat(Glob.of(CacheKeys.toolCallPattern("query")).matches(key)).isFalse();
        assertThat(CacheKeys.forToolCall("read", "{\"path\":\"a\"}", "2")).isNotEqualTo(key);
    }
}
