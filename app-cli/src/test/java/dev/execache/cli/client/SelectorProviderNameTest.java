package dev.execache.cli.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.Test;

/** The selector provider the thin client names is the one the JDK would choose unnamed. */
class SelectorProviderNameTest {
    @Test
    void theProviderNamedIsTheJdksOwnOnThisPlatform() {
        String named = ThinClient.platformSelectorProvider();
        assumeTrue(named != null, "no provider is named on " + System.getProperty("os.name"));
        assumeTrue(System.getProperty("java.nio.channels.spi.SelectorProvider") == null,
                "this JVM was given a provider by name");

        assertThat(named).isEqualTo(SelectorProvider.provider().getClass().getName());
    }
}
