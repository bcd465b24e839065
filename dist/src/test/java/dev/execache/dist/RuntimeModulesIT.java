package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bundled runtime's modules (runtime.modules in dist/pom.xml) cover what jdeps finds the jar uses. */
class RuntimeModulesIT {
    @Test
    void theRuntimeHasEveryModuleJdepsFindsInTheJar() throws Exception {
        Path jdeps = Path.of(System.getProperty("java.home"), "bin", "jdeps");
        Process process = new ProcessBuilder(jdeps.toString(), "--ignore-missing-deps", "--multi-release", "17",
                "--print-module-deps", Release.target().resolve("lib/execache.jar").toString())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes()).strip();
        assertThat(process.waitFor()).as("jdeps: " + output).isZero();

        List<String> found = Arrays.asList(output.lines().reduce((first, last) -> last).orElse("").split(","));

        assertThat(Arrays.asList(System.getProperty("execache.runtimeModules").split(","))).containsAll(found);
    }
}
