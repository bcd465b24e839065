package dev.execache.cli.command;

import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/** Reads the version and the commit the build wrote into {@code execache-version.properties} and {@code execache-commit.properties}. */
public final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() throws IOException {
        Properties properties = new Properties();
        for (String resource : new String[] {"/execache-version.properties", "/execache-commit.properties"}) {
            try (InputStream in = VersionProvider.class.getResourceAsStream(resource)) {
                if (in != null) {
                    properties.load(in);
                }
            }
        }
        return new String[] {"execache " + known(properties.getProperty("version")).orElse("unknown") + " ("
                + commit(properties) + ")",
            "Java " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")"};
    }

    /** A build from sources without .git (or without git) writes no commit: it is not known. */
    static String commit(Properties properties) {
        return known(properties.getProperty("commit"))
                .map(commit -> "commit " + commit + ("true".equals(properties.getProperty("modified")) ? ", modified" : ""))
                .orElse("unknown commit");
    }

    private static Optional<String> known(String value) {
        return value == null || value.isBlank() || value.startsWith("${")
                ? Optional.empty() : Optional.of(value.strip());
    }
}
