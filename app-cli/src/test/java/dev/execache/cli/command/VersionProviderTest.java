package dev.execache.cli.command;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class VersionProviderTest {
    @Test
    void versionNamesTheVersionAndTheCommitOfThisBuild() throws Exception {
        String first = new VersionProvider().getVersion()[0];

        assertThat(first).matches("execache \\d+\\.\\d+\\.\\d+(-SNAPSHOT)? \\((commit [0-9a-f]{12}(, modified)?|unknown commit)\\)");
    }

    @Test
    void aBuildWithoutGitSaysTheCommitIsUnknown() {
        Properties noCommit = properties("", "false");

        assertThat(VersionProvider.commit(noCommit)).isEqualTo("unknown commit");
    }

    @Test
    void aBuildWithChangesNotCommittedSaysSo() {
        assertThat(VersionProvider.commit(properties("0123456789ab", "true"))).isEqualTo("commit 0123456789ab, modified");
        assertThat(VersionProvider.commit(properties("0123456789ab", "false"))).isEqualTo("commit 0123456789ab");
    }

    private static Properties properties(String commit, String modified) {
        Properties properties = new Properties();
        properties.setProperty("commit", commit);
        properties.setProperty("modified", modified);
        return properties;
    }
}
