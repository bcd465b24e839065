package dev.execache.cli.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which command lines the thin client hands to the resident server and which it runs itself. */
class ThinClientRoutingTest {
    @Test
    void statsGoesToTheServerButAWatchRunsInItsOwnProcess() {
        assertThat(ThinClient.throughServer(new String[] {"stats"}, Map.of())).isTrue();
        assertThat(ThinClient.throughServer(new String[] {"stats", "--watch"}, Map.of())).isFalse();
        assertThat(ThinClient.throughServer(new String[] {"stats", "--interval", "1", "--watch"}, Map.of())).isFalse();
        assertThat(ThinClient.throughServer(new String[] {"run", "x.js", "--", "--watch"}, Map.of())).isTrue();
    }
}
