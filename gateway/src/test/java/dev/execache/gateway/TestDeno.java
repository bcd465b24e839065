package dev.execache.gateway;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** The Deno the tests run code with: the one execache would use. */
public final class TestDeno {
    private TestDeno() {
    }

    /** EXECACHE_DENO, deno on the PATH, else the copy execache installed. */
    public static Path executable() throws IOException {
        String configured = System.getenv("EXECACHE_DENO");
        if (configured != null) {
            return Path.of(configured);
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, "deno");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = xdg != null && !xdg.isBlank() ? Path.of(xdg, "execache") : Path.of(System.getProperty("user.home"), ".cache", "execache");
        try (Stream<Path> files = Files.walk(cache, 6)) {
            // the executable itself, not npm's launcher script linked from node_modules/.bin
            return files.filter(path -> path.getFileName().toString().equals("deno") && !Files.isSymbolicLink(path)
                    && Files.isRegularFile(path) && Files.isExecutable(path)).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no deno found; set EXECACHE_DENO"));
        }
    }
}
