package dev.execache.dist;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the build put the release artifacts and the tests' own Node peers (dist/pom.xml passes them). */
final class Release {
    private Release() {
    }

    static String version() {
        return property("execache.version");
    }

    static Path target() {
        return Path.of(property("execache.dist"));
    }

    static Path linuxArchive() {
        return existing(target().resolve("execache-" + version() + "-linux-x64.tar.gz"));
    }

    static Path portableZip() {
        return existing(target().resolve("execache-" + version() + ".zip"));
    }

    static Path npmPackage() {
        return existing(target().resolve("execache-" + version() + ".tgz"));
    }

    static Path npmPlatformPackage() {
        return existing(target().resolve("execache-linux-x64-" + version() + ".tgz"));
    }

    static Path testNode() {
        return Path.of(property("execache.testNodeModules")).getParent();
    }

    /** The Deno the tests' package.json pins, for a machine that has Deno on its PATH. */
    static Path deno() {
        return existing(testNode().resolve("node_modules/@deno/linux-x64-glibc/deno"));
    }

    /** The node on the build's own PATH. */
    static Path node() {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(directory, "node");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("no node on the PATH: the release tests drive serve with the TypeScript SDK");
    }

    static Path sources() {
        return Path.of(property("execache.root")).toAbsolutePath().normalize();
    }

    static String property(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("system property " + name + " is not set: run the tests through Maven");
        }
        return value;
    }

    private static Path existing(Path path) {
        if (!Files.exists(path)) {
            throw new IllegalStateException(path + " was not built: run `./mvnw -B verify -pl dist -am`");
        }
        return path;
    }
}
