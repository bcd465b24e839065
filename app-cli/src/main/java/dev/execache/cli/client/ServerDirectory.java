package dev.execache.cli.client;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Map;
import java.util.Set;

/**
 * The directory of the resident server's socket: {@code $XDG_RUNTIME_DIR/execache}, else
 * {@code server} in the cache directory. Only its owner may open it (mode 0700): anyone who
 * could reach the socket would see the commands, their environment and their input.
 */
public record ServerDirectory(Path path) {
    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    /** sun_path holds 108 bytes on Linux, 104 on macOS, with the terminating zero. */
    static final int MAX_SOCKET_PATH = 103;

    public static ServerDirectory of(Map<String, String> env) {
        String runtime = env.get("XDG_RUNTIME_DIR");
        if (runtime != null && !runtime.isBlank() && Path.of(runtime).isAbsolute() && Files.isDirectory(Path.of(runtime))) {
            return new ServerDirectory(Path.of(runtime, "execache"));
        }
        String cache = env.get("XDG_CACHE_HOME");
        Path cacheHome = cache != null && !cache.isBlank() && Path.of(cache).isAbsolute()
                ? Path.of(cache)
                : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".cache");
        return new ServerDirectory(cacheHome.resolve("execache").resolve("server"));
    }

    public Path socket() {
        return path.resolve("server.sock");
    }

    public Path lock() {
        return path.resolve("server.lock");
    }

    public Path log() {
        return path.resolve("server.log");
    }

    /** Why this directory must not be used, or null when it is the user's own, mode 0700 (or absent). */
    public String problem() {
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return tooLong();
        } catch (IOException | UnsupportedOperationException e) {
            return path + " cannot be checked: " + e.getMessage();
        }
        if (!attributes.isDirectory()) {
            return path + " is not a directory";
        }
        try {
            UserPrincipal me = FileSystems.getDefault().getUserPrincipalLookupService()
                    .lookupPrincipalByName(System.getProperty("user.name"));
            if (!attributes.owner().equals(me)) {
                return path + " belongs to " + attributes.owner().getName() + ", not to " + me.getName();
            }
        } catch (IOException e) {
            return path + ": its owner cannot be checked: " + e.getMessage();
        }
        if (tooLong() != null) {
            return tooLong();
        }
        if (!attributes.permissions().equals(OWNER_ONLY)) {
            return path + " is open to others (mode " + PosixFilePermissions.toString(attributes.permissions())
                    + ", must be rwx------)";
        }
        return null;
    }

    private String tooLong() {
        if (socket().toString().getBytes(StandardCharsets.UTF_8).length > MAX_SOCKET_PATH) {
            return "the socket path " + socket() + " is longer than a Unix socket allows (" + MAX_SOCKET_PATH
                    + " bytes); set XDG_RUNTIME_DIR to a shorter directory";
        }
        return null;
    }

    /** Creates the directory, only its owner may open it, unless it exists; then checks it. */
    public String create() {
        try {
            Files.createDirectories(path.getParent());
            Files.createDirectory(path, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } catch (FileAlreadyExistsException e) {
            // checked below, like any directory found
        } catch (IOException e) {
            return path + " cannot be created: " + e.getMessage();
        }
        return problem();
    }

    /** A connection to the server listening here, or null when none is. */
    public SocketChannel connect() {
        if (!Files.exists(socket(), LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        try {
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.connect(UnixDomainSocketAddress.of(socket()));
                return channel;
            } catch (IOException e) {
                channel.close();
                return null;
            }
        } catch (IOException e) {
            return null;
        }
    }
}
