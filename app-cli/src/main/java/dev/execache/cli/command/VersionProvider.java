package dev.execache.cli.command;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/** Reads the version the build wrote into {@code execache-version.properties}. */
public final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() throws IOException {
        Properties properties = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream("/execache-version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        }
        return new String[] {"execache " + properties.getProperty("version", "unknown"),
            "Java " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")"};
    }
}
