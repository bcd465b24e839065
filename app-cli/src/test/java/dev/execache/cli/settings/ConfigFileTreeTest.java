package dev.execache.cli.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The config file's tree, read without an ObjectMapper, is the one Jackson's own {@code readTree} makes. */
class ConfigFileTreeTest {
    private static final ObjectMapper JACKSON = new ObjectMapper(YAMLFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());

    @ParameterizedTest
    @ValueSource(strings = {
        "",
        "# only a comment\n",
        "servers:\n  fs:\n    command: npx\n    args: [\"-y\", \"@scope/server\", '--flag']\n    env: {A: b, EMPTY: \"\"}\n",
        "code_execution:\n  timeout_seconds: 30\n  memory_mb: 2147483648\n  big: 123456789012345678901234567890\n"
                + "  ratio: 0.5\n  exp: 1e3\n  neg: -7\n  hex: 0x1F\n",
        "a: true\nb: false\nc: null\nd: ~\ne:\nf: yes\ng: 'true'\nh: \"1\"\n",
        "list:\n  - one\n  - {two: 2}\n  - [3, [4]]\n  -\n",
        "base: &base {command: node, args: [a]}\nservers:\n  x: *base\n",
        "text: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
        "first: 1\n---\nsecond: 2\n",
        "bin: !!binary aGVsbG8=\n",
        "- a\n- b\n",
        "just a scalar\n",
    })
    void isTheTreeJacksonReads(String yaml) throws Exception {
        assertThat(ConfigFile.readTree(yaml)).isEqualTo(JACKSON.readTree(yaml));
    }

    @ParameterizedTest
    @ValueSource(strings = {"servers:\n  a: {command: x}\n  a: {command: y}\n", "a: 1\nb: {c: 1, c: 2}\n", "a: b: c\n", "servers:\n  x: [1, 2\n", "a:\n\t- b\n", "key: \"unterminated\n"})
    void failsWhereJacksonFailsAndAsItDoes(String yaml) {
        JacksonException expected = org.junit.jupiter.api.Assertions.assertThrows(JacksonException.class,
                () -> JACKSON.readTree(yaml));

        assertThatThrownBy(() -> ConfigFile.readTree(yaml)).isInstanceOf(JacksonException.class)
                .hasMessage(expected.getMessage());
    }
}
