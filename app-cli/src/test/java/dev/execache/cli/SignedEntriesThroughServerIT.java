package dev.execache.cli;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every case of {@link SignedEntriesIT}, with the same expectations, through one resident server
 * whose own environment holds a key: each command is signed (or not) with the keys of its own
 * environment, never with the server's or an earlier command's.
 */
class SignedEntriesThroughServerIT extends SignedEntriesIT {
    @TempDir
    static Path runtime;
    private static ServerSuite server;

    @BeforeAll
    static void startServer() throws Exception {
        server = new ServerSuite(runtime);
        server.start(Map.of("EXECACHE_SIGNING_KEY", KEY));
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.stop();
    }
}
