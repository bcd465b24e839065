package dev.execache.cli;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** Every case of {@link CommandLineUxIT}, with the same expectations, through the resident server. */
class CommandLineUxThroughServerIT extends CommandLineUxIT {
    @TempDir
    static Path runtime;
    private static ServerSuite server;

    @BeforeAll
    static void startServer() throws Exception {
        server = new ServerSuite(runtime);
        server.start();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.stop();
    }
}
