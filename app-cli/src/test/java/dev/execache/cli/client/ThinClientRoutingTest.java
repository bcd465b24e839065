package dev.execache.cli.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which command lines the thin client hands to the resident server and which it runs itself. */
class ThinClientRoutingTest {
    @Test
    void statsGoesToTheServerButAWatchRunsInItsOwnProcess() {
        assertThat(ThinClient.throughServer(new String[] {"stats"}, Map.of())).isTrue();
        assertThat(ThinClient.throughServer(new String[] {"stats", "--watch"}, Map.of())).isFalse();
        assertThat(ThinClient.throughServer(new String[] {"stats", "--interval", "1", "--watch"}, Map.of())).isFalse();
        assertThat(ThinClient.throughServer(new String[] {"run", "x.js", "--", "--watch"}, Map.of())).isTrue();
    }

    @Test
    void aRunThatShowsItsServersStderrRunsInItsOwnProcess() {
        assertThat(ThinClient.throughServer(new String[] {"run", "x.js"}, Map.of())).isTrue();
        assertThat(ThinClient.throughServer(new String[] {"run", "--server-logs", "x.js"}, Map.of())).isFalse();
    }

    /**
     * The launchers (the checkout's and the installed one) pick a command's class-data archive by the
     * same rule: the lists must not drift apart.
     */
    @ParameterizedTest
    @ValueSource(strings = {"../execache", "../dist/src/main/bin/execache"})
    void theLauncherNamesTheCommandsTheServerAnswers(String path) throws IOException {
        String launcher = Files.readString(Path.of(path));
        Matcher served = Pattern.compile("\\n\\s*([a-z|]+)\\) return 0 ;;").matcher(launcher);

        assertThat(served.find()).as("the launcher's list of served commands").isTrue();
        assertThat(Set.of(served.group(1).split("\\|"))).isEqualTo(ThinClient.SERVED);
    }
}
