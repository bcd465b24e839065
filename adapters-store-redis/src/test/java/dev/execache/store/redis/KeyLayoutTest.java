package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeyLayoutTest {
    @Test
    void theSharesOfTheUsedPartitionsAddUpToTheBoundEachAtLeastTheMinimum() {
        for (int bound : new int[] {1, 5, 15, 16, 50, 100, 127, 128, 1_000, 10_007}) {
            KeyLayout layout = KeyLayout.of("execache:", 16, bound);
            int sum = layout.usedPartitions().stream().mapToInt(partition -> layout.share(bound, partition.index(), 0)).sum();
            assertThat(sum).as("bound %s", bound).isEqualTo(bound);
            assertThat(layout.usedPartitions()).as("bound %s", bound).allSatisfy(partition ->
                    assertThat(layout.share(bound, partition.index(), 0)).isGreaterThanOrEqualTo(Math.min(bound, KeyLayout.MIN_SHARE)));
        }
        assertThat(KeyLayout.of("execache:", 16, 15).used()).as("a small bound is one exact LRU").isEqualTo(1);
        assertThat(KeyLayout.of("execache:", 16, 10_000).used()).isEqualTo(16);
    }

    @Test
    void aGroupsSharesAddUpToItsBoundWhereverTheRemainderStartsAndEachHoldsOne() {
        KeyLayout layout = KeyLayout.of("execache:", 16, 10_000);
        for (int rotation : new int[] {0, 5, -3, Integer.MIN_VALUE}) {
            int sum = layout.usedPartitions().stream().mapToInt(partition -> layout.share(37, partition.index(), rotation)).sum();
            assertThat(sum).isEqualTo(37);
        }
        assertThat(layout.usedPartitions()).allSatisfy(partition -> assertThat(layout.share(3, partition.index(), 0)).isOne());
    }

    @Test
    void everyKeyFallsInAUsedPartitionAndTheKeysSpreadOverAllOfThem() {
        KeyLayout layout = KeyLayout.of("execache:", 16, 100);
        Set<Integer> used = new HashSet<>();
        layout.usedPartitions().forEach(partition -> used.add(partition.index()));
        Set<Integer> hit = new HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            hit.add(layout.partitionOf("v1:" + i));
        }
        assertThat(hit).isEqualTo(used);
        assertThat(used).contains(0).hasSize(12);
    }

    @Test
    void eachPartitionsTagLiesInItsSliceOfTheSlotsAndTheTagsDiffer() {
        KeyLayout layout = KeyLayout.of("execache:", 16, 100);
        Set<String> roots = new HashSet<>();
        for (KeyLayout.Partition partition : layout.all()) {
            int slot = KeyLayout.slot(layout.tag(partition.index()));
            assertThat(slot).isBetween(1024 * partition.index(), 1024 * (partition.index() + 1) - 1);
            assertThat(partition.root()).startsWith("{execache:3p" + partition.index()).endsWith("}:");
            roots.add(partition.root());
        }
        assertThat(roots).hasSize(16);
    }

    @Test
    void aPrefixWithBracesOrABadPartitionCountIsRefusedSayingWhy() {
        assertThatThrownBy(() -> KeyLayout.of("a{b}:", 16, 100)).hasMessageContaining("must not contain { or }");
        assertThatThrownBy(() -> KeyLayout.of("execache:", 0, 100)).hasMessage("partitions must be between 1 and 1024: 0");
        assertThatThrownBy(() -> RedisStoreSettings.of("redis://localhost").withPartitions(2_000))
                .hasMessage("partitions must be between 1 and 1024: 2000");
    }
}
