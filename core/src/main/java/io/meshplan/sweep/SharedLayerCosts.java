package io.meshplan.sweep;

import io.meshplan.interop.LayerCost;
import io.meshplan.interop.LayerCostModel;
import io.meshplan.model.Recompute;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.FutureTask;

/**
 * A layer cost model shared by sweep points that run at the same time: each layer is priced once
 * by the wrapped model, by the first point that asks, while the others wait for that result
 * instead of solving it again. A prefetch takes the layers nobody has started first and waits for
 * the rest at the end, so concurrent points split the solves between them.
 */
final class SharedLayerCosts implements LayerCostModel {
  private final LayerCostModel delegate;
  private final Map<Key, FutureTask<Optional<LayerCost>>> memo = new ConcurrentHashMap<>();

  /**
   * Wraps a model.
   *
   * @param delegate the model that prices layers (safe to call from several threads)
   */
  SharedLayerCosts(LayerCostModel delegate) {
    this.delegate = Require.nonNull(delegate, "delegate");
  }

  @Override
  public LayerCost cost(Kind kind, io.meshplan.interop.LayerSetting setting) {
    Key key = new Key(kind, setting);
    FutureTask<Optional<LayerCost>> mine = new FutureTask<>(
        () -> Optional.ofNullable(delegate.cost(key.kind(), key.setting())));
    FutureTask<Optional<LayerCost>> task = memo.putIfAbsent(key, mine);
    if (task == null) {
      task = mine;
      task.run();
    }
    return await(task).orElse(null);
  }

  @Override
  public void prefetch(Collection<Key> keys) {
    // Plain layers first: full recomputation is derived from the layer without it.
    List<Key> ordered = new ArrayList<>();
    for (boolean derived : new boolean[] {false, true}) {
      for (Key k : new LinkedHashSet<>(keys)) {
        if (derived == (k.kind() == Kind.BLOCK && k.setting().recompute() == Recompute.FULL)) {
          ordered.add(k);
        }
      }
    }
    List<FutureTask<Optional<LayerCost>>> others = new ArrayList<>();
    for (Key k : ordered) {
      FutureTask<Optional<LayerCost>> mine = new FutureTask<>(
          () -> Optional.ofNullable(delegate.cost(k.kind(), k.setting())));
      FutureTask<Optional<LayerCost>> task = memo.putIfAbsent(k, mine);
      if (task == null) {
        mine.run();
      } else {
        others.add(task);
      }
    }
    for (FutureTask<Optional<LayerCost>> t : others) {
      await(t);
    }
  }

  private static Optional<LayerCost> await(FutureTask<Optional<LayerCost>> task) {
    return io.meshplan.exec.Futures.await(task, "pricing a layer");
  }
}
