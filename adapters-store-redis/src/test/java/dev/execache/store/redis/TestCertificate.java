package dev.execache.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.List;

/**
 * A self-signed certificate for 127.0.0.1 and localhost, made by the JDK's {@code keytool}
 * (so nothing else needs installing): PEM files for redis-server and a PKCS#12 trust store
 * for the client.
 */
record TestCertificate(Path certificatePem, Path keyPem, Path trustStore, String trustStorePassword) {
    private static final String PASSWORD = "changeit";

    static TestCertificate create(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
        Path keyStore = dir.resolve("server.p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process process = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", "redis",
                "-keyalg", "RSA", "-keysize", "2048", "-validity", "2", "-dname", "CN=localhost",
                "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12",
                "-keystore", keyStore.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD))
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IOException("keytool failed: " + output);
        }
        KeyStore server = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keyStore)) {
            server.load(in, PASSWORD.toCharArray());
        }
        Certificate certificate = server.getCertificate("redis");
        Path certificatePem = dir.resolve("redis.crt");
        Path keyPem = dir.resolve("redis.key");
        Files.writeString(certificatePem, pem("CERTIFICATE", certificate.getEncoded()));
        Files.writeString(keyPem, pem("PRIVATE KEY", server.getKey("redis", PASSWORD.toCharArray()).getEncoded()));

        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        trusted.setCertificateEntry("redis", certificate);
        Path trustStore = dir.resolve("trust.p12");
        try (OutputStream out = Files.newOutputStream(trustStore)) {
            trusted.store(out, PASSWORD.toCharArray());
        }
        return new TestCertificate(certificatePem, keyPem, trustStore, PASSWORD);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
