package io.meshplan.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DoctorNaturalOrderTest {
  @Test
  void numbersInNamesCompareNumerically() {
    List<String> names = new ArrayList<>(List.of(
        "mlx5_10", "mlx5_2", "mlx5_bond_0", "ib10", "ib1", "eth01", "eth1", "lo", "mlx5_0"));

    names.sort(NaturalOrder.INSTANCE);

    assertThat(names).containsExactly(
        "eth01", "eth1", "ib1", "ib10", "lo", "mlx5_0", "mlx5_2", "mlx5_10", "mlx5_bond_0");
  }
}
