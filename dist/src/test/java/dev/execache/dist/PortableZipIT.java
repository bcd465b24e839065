package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The portable zip: the launchers and the jars, run by the Java 17+ a person has. */
class PortableZipIT {
    @TempDir
    Path root;

    @Test
    void itHoldsNoRuntimeAndRunsOnTheJavaOfJavaHome() throws Exception {
        NoJavaMachine machine = NoJavaMachine.in(root);
        try (ZipFile zip = new ZipFile(Release.portableZip().toFile())) {
            assertThat(zip.stream().map(entry -> entry.getName()).toList())
                    .contains("execache-" + Release.version() + "/bin/execache", "execache-" + Release.version() + "/bin/execache.cmd",
                            "execache-" + Release.version() + "/lib/execache.jar")
                    .noneMatch(name -> name.contains("/runtime/"));
        }
        machine.run(root, List.of("unzip", "-q", Release.portableZip().toString())).succeeded();
        String execache = root.resolve("execache-" + Release.version() + "/bin/execache").toString();

        NoJavaMachine.Result noJava = machine.run(machine.work, List.of(execache, "--version"));
        NoJavaMachine.Result withJavaHome = machine.run(machine.work, List.of(execache, "--version"),
                Map.of("JAVA_HOME", System.getProperty("java.home")));

        assertThat(noJava.exitCode()).isEqualTo(3);
        assertThat(noJava.stderr()).startsWith("execache: needs Java 17 or newer").hasLineCount(1);
        assertThat(withJavaHome.succeeded().stdout()).startsWith("execache " + Release.version() + " (");
        assertThat(Files.readString(root.resolve("execache-" + Release.version() + "/bin/execache.cmd"))).contains("\r\n");
    }
}
