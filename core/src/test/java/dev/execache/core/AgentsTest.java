package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** An agent's name becomes a store key and a metric label: plain, short, never empty. */
class AgentsTest {

    @Test
    void aPlainNameIsKeptAsItIs() {
        assertThat(Agents.name("claude-code_2.1")).isEqualTo("claude-code_2.1");
    }

    @Test
    void everyOtherRunOfCharactersBecomesOneDashAndNoneIsLeftAtTheEnds() {
        assertThat(Agents.name("  Some Client / v2 \"quoted\"\n")).isEqualTo("Some-Client-v2-quoted");
        assertThat(Agents.name("café{agent=\"x\"}")).isEqualTo("caf-agent-x");
    }

    @Test
    void aLongNameIsCutToTheLimit() {
        assertThat(Agents.name("a".repeat(500))).hasSize(Agents.MAX_LENGTH);
    }

    @Test
    void nothingPlainLeftIsNoNameAndTheFirstNameThatIsOneIsTaken() {
        assertThat(Agents.name(" / ")).isNull();
        assertThat(Agents.name(null)).isNull();
        assertThat(Agents.firstOf(null, "\u00e9\u00e9", "ci-bot", "other")).isEqualTo("ci-bot");
        assertThat(Agents.firstOf(null, "")).isEqualTo(Agents.UNKNOWN);
    }
}
