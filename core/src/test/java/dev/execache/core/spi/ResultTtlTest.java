package dev.execache.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ResultTtlTest {
    @Test
    void aWholeNumberOfMillisecondsIsTheTtlWhicheverTypeTheParserGaveIt() {
        assertThat(ResultTtl.read(1500, null).ttl()).isEqualTo(Duration.ofMillis(1500));
        assertThat(ResultTtl.read(1500L, null).ttl()).isEqualTo(Duration.ofMillis(1500));
        assertThat(ResultTtl.read(BigInteger.valueOf(1500), null).ttl()).isEqualTo(Duration.ofMillis(1500));
        assertThat(ResultTtl.read(1500.0, null).ttl()).isEqualTo(Duration.ofMillis(1500));
        assertThat(ResultTtl.read(new BigDecimal("1.5E3"), null).ttl()).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void zeroOrLessIsStaleAtOnce() {
        assertThat(ResultTtl.read(0, null).staleAtOnce()).isTrue();
        assertThat(ResultTtl.read(-20, null).ttl()).isZero();
        assertThat(ResultTtl.read(1, null).staleAtOnce()).isFalse();
    }

    @Test
    void noNumberOrAFractionIsNoTtlAtAll() {
        assertThat(ResultTtl.read(null, null)).isEqualTo(ResultTtl.NONE);
        assertThat(ResultTtl.read(1500.5, null).ttl()).isNull();
        assertThat(ResultTtl.read(Double.NaN, null).ttl()).isNull();
        assertThat(ResultTtl.read(Double.POSITIVE_INFINITY, null).ttl()).isNull();
    }

    @Test
    void onlyAPrivateScopeIsPrivate() {
        assertThat(ResultTtl.read(null, "private").privateScope()).isTrue();
        assertThat(ResultTtl.read(null, "public").privateScope()).isFalse();
        assertThat(ResultTtl.read(null, "PRIVATE").privateScope()).isFalse();
    }

    @Test
    void aTtlBeyondWhatALongHoldsIsTheLongest() {
        assertThat(ResultTtl.read(new BigInteger("99999999999999999999999"), null).ttl())
                .isEqualTo(Duration.ofMillis(Long.MAX_VALUE));
    }
}
