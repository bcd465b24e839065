package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.cli.output.Output;
import dev.execache.cli.output.TerminalText;
import dev.execache.gateway.Json;
import org.junit.jupiter.api.Test;

class TerminalTextTest {

    @Test
    void escapeSequencesBecomeVisibleTextButNewlinesAndTabsStay() {
        String clipboard = "\u001b]52;c;SGVsbG8=\u0007";
        String hidden = "shown\r\u001b[8mhidden\u001b[2J";

        assertThat(TerminalText.escape(clipboard)).isEqualTo("\\x1b]52;c;SGVsbG8=\\x07");
        assertThat(TerminalText.escape(hidden)).isEqualTo("shown\\x0d\\x1b[8mhidden\\x1b[2J");
        assertThat(TerminalText.escape("a\tb\nc\r\nd\u009b2J\u007f")).isEqualTo("a\tb\nc\r\nd\\u009b2J\\x7f");
        assertThat(TerminalText.escape("plain ✓ 日本")).isEqualTo("plain ✓ 日本");
    }

    @Test
    void jsonKeepsItsValueWithC1ControlsEscaped() throws Exception {
        String json = "{\"s\":\"a\u009b2Jb\u007f\"}";

        String escaped = TerminalText.escapeJson(json);

        assertThat(escaped).isEqualTo("{\"s\":\"a\\u009b2Jb\\u007f\"}");
        assertThat(Json.MAPPER.readTree(escaped)).isEqualTo(Json.MAPPER.readTree(json));
    }
}
