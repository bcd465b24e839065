package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Canonical JSON numbers are ECMAScript's Number#toString (RFC 8785, section 3.2.2.3): checked
 * against the RFC's own table and against Node.js, which implements ECMAScript, on many doubles.
 */
class EcmaScriptNumbersTest {
    @TempDir
    Path dir;

    /** RFC 8785, Appendix B: the IEEE 754 bits of a double and the text it must be written as. */
    @ParameterizedTest
    @CsvSource({
        "0000000000000000, 0",
        "8000000000000000, 0",
        "0000000000000001, 5e-324",
        "8000000000000001, -5e-324",
        "7fefffffffffffff, 1.7976931348623157e+308",
        "ffefffffffffffff, -1.7976931348623157e+308",
        "4340000000000000, 9007199254740992",
        "c340000000000000, -9007199254740992",
        "4430000000000000, 295147905179352830000",
        "44b52d02c7e14af5, 9.999999999999997e+22",
        "44b52d02c7e14af6, 1e+23",
        "44b52d02c7e14af7, 1.0000000000000001e+23",
        "444b1ae4d6e2ef4e, 999999999999999700000",
        "444b1ae4d6e2ef4f, 999999999999999900000",
        "444b1ae4d6e2ef50, 1e+21",
        "3eb0c6f7a0b5ed8c, 9.999999999999997e-7",
        "3eb0c6f7a0b5ed8d, 0.000001",
        "41b3de4355555553, 333333333.3333332",
        "41b3de4355555554, 333333333.33333325",
        "41b3de4355555555, 333333333.3333333",
        "41b3de4355555556, 333333333.3333334",
        "41b3de4355555557, 333333333.33333343",
        "becbf647612f3696, -0.0000033333333333333333",
        "43143ff3c1cb0959, 1424953923781206.2",
    })
    void theRfcAppendixValues(String bits, String expected) {
        assertThat(CanonicalJson.formatDouble(Double.longBitsToDouble(Long.parseUnsignedLong(bits, 16))))
                .isEqualTo(expected);
    }

    @Test
    void integersBeyondTwoToTheFiftyThreeGetTheirShortestDigits() {
        assertThat(CanonicalJson.formatDouble(-376752594070348864d)).isEqualTo("-376752594070348860");
        assertThat(CanonicalJson.formatDouble(0x1p60)).isEqualTo("1152921504606847000");
        assertThat(CanonicalJson.formatDouble(9007199254740993d)).isEqualTo("9007199254740992");
        assertThat(CanonicalJson.formatDouble(123456789012d)).isEqualTo("123456789012");
    }

    @Test
    void powersOfTwoGetTheShortestDigitsThoughTheirNearestNeighbourDoesNotReadBack() {
        assertThat(CanonicalJson.formatDouble(0x1p-1022)).isEqualTo("2.2250738585072014e-308");
        assertThat(CanonicalJson.formatDouble(0x1p-44)).isEqualTo("5.684341886080802e-14");
        assertThat(CanonicalJson.formatDouble(0x1p-1069)).isEqualTo("1.6e-322");
    }

    @Test
    void manyDoublesAreWrittenAsNodeWritesThem() throws Exception {
        List<Double> values = sample(20_000, new SplittableRandom(20261123));
        List<String> expected = nodeToString(values);

        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            String ours = CanonicalJson.formatDouble(values.get(i));
            if (!ours.equals(expected.get(i))) {
                mismatches.add(Long.toHexString(Double.doubleToRawLongBits(values.get(i))) + ": node " + expected.get(i)
                        + ", ours " + ours);
            }
        }
        assertThat(mismatches).as("of %d doubles", values.size()).isEmpty();
    }

    /**
     * Random bit patterns (every magnitude, subnormals too), integers around and above 2^53,
     * decimals with few digits (the values people write), and powers of two with their neighbours.
     */
    private static List<Double> sample(int size, SplittableRandom random) {
        List<Double> values = new ArrayList<>(size);
        for (int exponent = -1074; exponent <= 1023; exponent++) {
            double power = Math.scalb(1.0, exponent);
            values.add(power);
            values.add(Math.nextUp(power));
            values.add(-Math.nextDown(power));
        }
        while (values.size() < size) {
            double value = switch (random.nextInt(4)) {
                case 0 -> Double.longBitsToDouble(random.nextLong());
                case 1 -> (double) (random.nextLong() >> random.nextInt(12));
                case 2 -> random.nextInt(-999_999, 1_000_000) * Math.pow(10, random.nextInt(-30, 30));
                default -> random.nextDouble() * Math.pow(10, random.nextInt(-8, 23));
            };
            if (Double.isFinite(value)) {
                values.add(value);
            }
        }
        return values;
    }

    /** Node.js's {@code String(number)} of each double, given as its IEEE 754 bits. */
    private List<String> nodeToString(List<Double> values) throws IOException, InterruptedException {
        Path input = dir.resolve("bits.txt");
        StringBuilder bits = new StringBuilder();
        for (double value : values) {
            bits.append(Long.toHexString(Double.doubleToRawLongBits(value))).append('\n');
        }
        Files.writeString(input, bits);
        Path output = dir.resolve("strings.txt");
        String script = """
                const fs = require('fs');
                const view = new DataView(new ArrayBuffer(8));
                const out = fs.readFileSync(process.argv[1], 'utf8').trim().split('\\n').map((hex) => {
                  view.setBigUint64(0, BigInt('0x' + hex));
                  return String(view.getFloat64(0));
                });
                fs.writeFileSync(process.argv[2], out.join('\\n') + '\\n');
                """;
        Process node = new ProcessBuilder("node", "-e", script, input.toString(), output.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("node.log").toFile()).start();
        assertThat(node.waitFor(5, TimeUnit.MINUTES)).as("node finished").isTrue();
        assertThat(node.exitValue()).as(Files.readString(dir.resolve("node.log"))).isZero();
        List<String> lines = Files.readAllLines(output, StandardCharsets.UTF_8);
        assertThat(lines).hasSize(values.size());
        return lines;
    }
}
