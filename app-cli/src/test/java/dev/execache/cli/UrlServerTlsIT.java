package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.tools.mcp.HttpLab;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A url server over https with a certificate of a private CA (self-signed here): the packaged
 * execache trusts it only through a trust store the JVM is given, as for {@code rediss://}.
 */
class UrlServerTlsIT {
    @TempDir
    static Path certificates;
    private static HttpLab lab;

    @TempDir
    Path dir;

    @BeforeAll
    static void startLab() throws IOException, InterruptedException {
        run(certificates, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", "key.pem", "-out", "cert.pem");
        run(certificates, "keytool", "-importcert", "-noprompt", "-alias", "lab", "-file", "cert.pem",
                "-keystore", "trust.p12", "-storetype", "PKCS12", "-storepass", "changeit");
        lab = HttpLab.start("--era", "2025", "--tls-key", certificates.resolve("key.pem").toString(),
                "--tls-cert", certificates.resolve("cert.pem").toString());
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
    }

    private static void run(Path in, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(in.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as(String.join(" ", command) + ": " + output).isZero();
    }

    /** {@code execache tools} in a process of its own, with these JVM options; returns its exit code, stdout and stderr. */
    private String[] tools(String... jvmOptions) throws IOException, InterruptedException {
        Files.writeString(dir.resolve("execache.yaml"), "servers:\n  secure:\n    url: \"" + lab.url() + "\"\n");
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
        command.addAll(List.of(jvmOptions));
        command.addAll(List.of("-jar", System.getProperty("execache.jar"), "tools"));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile());
        builder.environment().put("EXECACHE_NO_DAEMON", "1");
        builder.environment().put("XDG_CACHE_HOME", dir.resolve("cache").toString());
        builder.environment().put("XDG_RUNTIME_DIR", dir.resolve("run").toString());
        builder.redirectError(dir.resolve("stderr.txt").toFile());
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new String[] {Integer.toString(process.exitValue()), out, Files.readString(dir.resolve("stderr.txt"))};
    }

    @Test
    void aPrivateCaInTheJvmsTrustStoreIsTrusted() throws Exception {
        String[] result = tools("-Djavax.net.ssl.trustStore=" + certificates.resolve("trust.p12"),
                "-Djavax.net.ssl.trustStorePassword=changeit");

        assertThat(result[0]).as(result[2]).isEqualTo("0");
        assertThat(result[1]).contains("secure__get_count");
        assertThat(result[2]).contains("server secure: connected (http-lab 1.0.0, MCP 2025-11-25 over HTTP)");
    }

    @Test
    void aCertificateTheTrustStoreDoesNotVouchForIsSaidSo() throws Exception {
        String[] result = tools();

        assertThat(result[1]).doesNotContain("secure__get_count");
        assertThat(result[2]).contains("server secure at " + lab.url() + ": its TLS certificate is not trusted by the JVM's"
                + " trust store");
    }
}
