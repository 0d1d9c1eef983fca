"""``anonstream hierarchy build|show|adult-bench``: embedding-cluster hierarchies (paper 004)."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from .model import Hierarchy
from .stream import SHIPPED_CUT, SHIPPED_METHOD, SHIPPED_RATIO, SHIPPED_WEIGHTS


def _registry():
    from ..config import Settings
    from ..stores.redis_hierarchy import RedisHierarchyRegistry
    from ..stores.redis_state import connect_settings

    settings = Settings()
    return RedisHierarchyRegistry(connect_settings(settings), settings.tenant)


def _write(hierarchy: Hierarchy, out: str) -> None:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(hierarchy.to_dict()) if path.suffix == ".json" else hierarchy.to_arx_csv())


def _build(args: argparse.Namespace) -> int:
    from ..config import Settings
    from ..embedding import Embedder
    from .builder import build_hierarchy

    counts = Counter(line.strip() for line in Path(args.values).read_text().splitlines() if line.strip())
    reference = ([line.strip() for line in Path(args.reference).read_text().splitlines() if line.strip()]
                 if args.reference else [])
    embedder = Embedder(args.model or Settings().embed_model)
    hierarchy = build_hierarchy(args.category, counts, embedder.encode, method=args.method, ratio=args.ratio, cut=args.cut,
                                weights=args.weights, reference=reference, min_label_count=args.min_label_count,
                                embedding_model=embedder.model_name, seed=args.seed)
    where = []
    if args.out:
        _write(hierarchy, args.out)
        where.append(args.out)
    if args.publish:
        where.append(f"redis version {_registry().publish(args.category, hierarchy)}")
    print(f"{args.category}: {len(hierarchy.paths)} values, cluster counts {hierarchy.info['cluster_counts']} "
          f"({args.method}) -> {', '.join(where) or 'nowhere (give --out or --publish)'}", file=sys.stderr)
    return 0


def _show(args: argparse.Namespace) -> int:
    if args.path:
        from .generalizer import load_hierarchy_file

        hierarchy, version = load_hierarchy_file(args.path, args.category), None
    else:
        stored = _registry().load(args.category, args.version)
        if stored is None:
            print(f"no hierarchy for {args.category!r}", file=sys.stderr)
            return 1
        hierarchy, version = stored.hierarchy, stored.version
    if args.csv:
        sys.stdout.write(hierarchy.to_arx_csv())
        return 0
    levels = [dict(Counter(p[level] for p in hierarchy.paths.values())) for level in range(1, hierarchy.levels)]
    print(json.dumps({"category": hierarchy.attribute, "version": version, "info": hierarchy.info,
                      "leaves": len(hierarchy.paths),
                      "levels": [{"nodes": len(lv), "leaves_per_node": lv} for lv in levels]}, indent=1))
    return 0


def _adult_bench(args: argparse.Namespace) -> int:
    from ..embedding import Embedder
    from . import adult

    data = Path(args.data)
    ks = [int(k) for k in args.k.split(",")]
    table = adult.load_table(data)
    manual = {a: adult.manual_hierarchy(data, a, table[a]) for a in adult.QUASI_IDENTIFIERS}
    rows = adult.bench(table, manual, ks, "manual", "manual")
    embedder = Embedder(args.model) if args.model else Embedder()
    methods = ("ward", "kmeans") if args.method == "both" else (args.method,)
    for method in methods:
        built = adult.embedding_hierarchies(table, embedder.encode, method, args.ratio, embedder.model_name, args.cut,
                                            args.seed, args.weights)
        name = "-".join([method] + [args.cut] * (args.cut != "count") + [args.weights] * (args.weights != "values"))
        rows += adult.bench(table, built, ks, "embedding", name)
    rows.sort(key=lambda r: (r.k, r.hierarchies != "manual"))
    if args.json:
        print(json.dumps({"rows": [r.as_dict() for r in rows]}))
    else:
        for r in rows:
            d = r.as_dict()
            print(f"k={d['k']:<4} {d['hierarchies']:<9} {d['method']:<7} retained {d['records_retained']:.4f} "
                  f"C_avg {d['c_avg']:6.2f}  (explicit: {d['records_retained_explicit']:.4f} / "
                  f"{d['c_avg_explicit']:.2f}) levels {d['levels']}")
    return 0


def add_commands(subparsers) -> None:
    hierarchy = subparsers.add_parser("hierarchy", help="embedding-cluster value hierarchies (paper 004)")
    sub = hierarchy.add_subparsers(dest="hierarchy_command", required=True)
    build = sub.add_parser("build", help="build a category's hierarchy from its observed values")
    build.add_argument("--category", required=True)
    build.add_argument("--values", required=True, help="text file, one observed value per line (repeats count)")
    build.add_argument("--reference", help="text file of reference vocabulary, one value per line")
    build.add_argument("--method", choices=["ward", "kmeans"], default=SHIPPED_METHOD)
    build.add_argument("--cut", choices=["count", "mass"], default=SHIPPED_CUT,
                       help="levels by cluster count (n/ratio^j) or record mass (halves of >= ratio^j records)")
    build.add_argument("--ratio", type=float, default=SHIPPED_RATIO,
                       help="divisor (count) or factor (mass) per level (default %(default)s; the paper's: 2)")
    build.add_argument("--weights", choices=["values", "records"], default=SHIPPED_WEIGHTS,
                       help="records (default): weigh each value by its count in --values, rare values merge first, "
                            "frequent ones last; values: each value once (the paper)")
    build.add_argument("--min-label-count", type=int, default=10,
                       help="a node is named after a member only if it has this many records")
    build.add_argument("--model", help="embedding model (default: ANONSTREAM_EMBED_MODEL)")
    build.add_argument("--seed", type=int, default=0)
    build.add_argument("--out", help="write .json (with centroids) or ARX .csv")
    build.add_argument("--publish", action="store_true", help="store as the category's next version in Redis")
    build.set_defaults(func=_build)
    show = sub.add_parser("show", help="a hierarchy's levels (from Redis, or --path)")
    show.add_argument("--category", required=True)
    show.add_argument("--path", help=".json or ARX .csv instead of Redis")
    show.add_argument("--version", type=int, help="default: the current version")
    show.add_argument("--csv", action="store_true", help="print the ARX CSV rows instead")
    show.set_defaults(func=_show)
    bench = sub.add_parser("adult-bench", help="paper 004's Adult table: manual vs embedding hierarchies")
    bench.add_argument("--data", required=True, help="folder with adult.data and arx-hierarchies/")
    bench.add_argument("--k", default="2,5,10,20,30,50,100")
    bench.add_argument("--method", choices=["ward", "kmeans", "both"], default=SHIPPED_METHOD)
    bench.add_argument("--cut", choices=["count", "mass"], default=SHIPPED_CUT,
                       help="levels by cluster count or record mass")
    bench.add_argument("--ratio", type=float, default=SHIPPED_RATIO, help="default %(default)s; the paper's: 2")
    bench.add_argument("--model", help="embedding model (default: the project's)")
    bench.add_argument("--seed", type=int, default=0, help="KMeans seed")
    bench.add_argument("--weights", choices=["values", "records"], default=SHIPPED_WEIGHTS,
                       help="weigh each value by its record count (default) or by 1 (the paper)")
    bench.add_argument("--json", action="store_true", help='one JSON document {"rows": [...]}')
    bench.set_defaults(func=_adult_bench)
