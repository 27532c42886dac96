package io.meshplan.deploy;

/**
 * The bash function {@code meshplan_gid_index DEVICE PORT} that picks, at run time on a node, the
 * RoCE GID index NCCL should use: the rule of {@code meshplan doctor} ({@code
 * doctor.GidSelector}, after the RunAI guide in {@code seeds/002}). Among the port's entries
 * {@code gids/<i>} that are eight groups of four hex digits, not all zero, and whose {@code
 * gid_attrs/types/<i>} reads {@code RoCE v2} or {@code IB/RoCE v1}, it ranks RoCE v2 before v1 and,
 * within each, an IPv4-mapped address ({@code 0000:0000:0000:0000:0000:ffff:...}) before other
 * IPv6 before link-local ({@code fe80::/10}); ties go to the lowest index. The sysfs root is
 * {@code $MESHPLAN_SYSFS_ROOT}, default {@code /sys}. It prints the index, or returns 1 when the
 * port has no usable entry.
 */
final class GidLookupScript {
  /** The function's text, ready to paste into a bash script. */
  static final String FUNCTION = """
      # Prints the GID index NCCL should use on a RoCE port, by the rule of 'meshplan doctor':
      # RoCE v2 before RoCE v1; IPv4-mapped before other IPv6 before link-local; lowest index on ties.
      meshplan_gid_index() {
        local dir="${MESHPLAN_SYSFS_ROOT:-/sys}/class/infiniband/$1/ports/$2"
        local best="" best_score=99 f i gid type score
        for f in "$dir"/gids/*; do
          i="${f##*/}"
          [[ "$i" =~ ^[0-9]+$ && -f "$f" ]] || continue
          gid="$(cat -- "$f" 2>/dev/null)" || continue
          gid="${gid#"${gid%%[![:space:]]*}"}"
          gid="${gid%"${gid##*[![:space:]]}"}"
          gid="${gid,,}"
          [[ "$gid" =~ ^[0-9a-f]{4}(:[0-9a-f]{4}){7}$ ]] || continue
          [[ "$gid" != 0000:0000:0000:0000:0000:0000:0000:0000 ]] || continue
          type="$(cat -- "$dir/gid_attrs/types/$i" 2>/dev/null)" || continue
          type="${type#"${type%%[![:space:]]*}"}"
          type="${type%"${type##*[![:space:]]}"}"
          case "$type" in
            "RoCE v2") score=0 ;;
            "IB/RoCE v1") score=3 ;;
            *) continue ;;
          esac
          if [[ "$gid" == 0000:0000:0000:0000:0000:ffff:* ]]; then
            :
          elif (( (16#${gid:0:4} & 0xffc0) == 0xfe80 )); then
            score=$((score + 2))
          else
            score=$((score + 1))
          fi
          if (( score < best_score )) || { (( score == best_score )) && (( 10#$i < 10#$best )); }; then
            best="$i"
            best_score="$score"
          fi
        done
        [[ -n "$best" ]] || return 1
        printf '%s\\n' "$((10#$best))"
      }
      """;

  private GidLookupScript() {}
}
