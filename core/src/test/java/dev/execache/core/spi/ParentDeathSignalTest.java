package dev.execache.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ParentDeathSignalTest {

    @Test
    void aChildStartedBehindThePrefixDiesWithTheThreadThatStartedIt() throws Exception {
        List<String> prefix = ParentDeathSignal.commandPrefix();
        if ("true".equals(System.getenv("CI"))) {
            // in CI a missing peer fails, never skips: Debian's util-linux brings setpriv
            assertThat(prefix).as("setpriv (Debian package util-linux) must be on the CI machine").isNotEmpty();
        }
        assumeFalse(prefix.isEmpty(), "no setpriv here (not Linux, or a minimal image)");
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of("sleep", "60"));
        AtomicReference<Process> started = new AtomicReference<>();
        Thread starter = new Thread(() -> {
            try {
                started.set(new ProcessBuilder(command).start());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        starter.start();
        starter.join();
        Process child = started.get();
        try {
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("the child ended with its starting thread").isTrue();
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void thePrefixIsSetprivEndingItsOptionsOrNothing() {
        List<String> prefix = ParentDeathSignal.commandPrefix();
        if (!prefix.isEmpty()) {
            assertThat(prefix.get(0)).endsWith("/setpriv");
            assertThat(prefix.subList(1, prefix.size())).containsExactly("--pdeathsig", "KILL", "--");
        }
    }
}
