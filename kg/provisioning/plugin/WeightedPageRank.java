package strata.ppr;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.neo4j.gds.NodeLabel;
import org.neo4j.gds.api.Graph;
import org.neo4j.gds.api.GraphStore;
import org.neo4j.gds.core.loading.GraphStoreCatalog;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.security.SecurityContext;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;
import org.neo4j.procedure.TerminationGuard;

/**
 * Personalised PageRank with a weighted restart vector, in one run, over a GDS in-memory projection.
 *
 * <p>Why Strata ships this: GDS 2.13 (the last GDS line for Neo4j 5.26) takes source nodes without weights, so
 * a weighted restart needed one gds.pageRank run per group of seeds, and every run's Pregel supersteps visit
 * every node of the graph: its cost grows with the graph, not with the seeds' neighbourhood. This is the push
 * that Strata's other engines run (kg/retrieval/methods/ppr.py, local_pagerank and MemoryGraph.pagerank): each
 * seed starts with (1 - damping) * weight; a node whose newly received mass exceeds the tolerance passes
 * damping * mass * w / degree along each relationship of weight w (degree: the sum of its relationships'
 * weights), for at most the given number of iterations. It reads the projection GDS holds in its catalog for the
 * calling user and database; nothing is written.
 */
public final class WeightedPageRank {

    @Context
    public GraphDatabaseService db;

    @Context
    public Transaction tx;

    @Context
    public SecurityContext security;

    @Context
    public TerminationGuard guard;

    /** A ranked node and its PageRank mass. */
    public static final class Ranked {
        public final Node node;
        public final double score;

        Ranked(Node node, double score) {
            this.node = node;
            this.score = score;
        }
    }

    @Procedure(name = "strata.ppr.stream", mode = Mode.READ)
    @Description("strata.ppr.stream(graph, sources, weights, damping, iterations, tolerance, label, depth): the "
            + "`depth` nodes with `label` of most personalised PageRank mass on the GDS projection `graph`, the "
            + "restart at each source node weighted by the weight at the same position.")
    public Stream<Ranked> stream(@Name("graph") String graphName, @Name("sources") List<Node> sources,
                                 @Name("weights") List<Double> weights, @Name("damping") double damping,
                                 @Name("iterations") long iterations, @Name("tolerance") double tolerance,
                                 @Name("label") String label, @Name("depth") long depth) {
        if (sources.size() != weights.size()) {
            throw new IllegalArgumentException("sources and weights differ in length: " + sources.size()
                    + " and " + weights.size());
        }
        GraphStore store = GraphStoreCatalog.get(security.subject().executingUser(), db.databaseName(), graphName)
                .graphStore();
        Graph graph = store.getGraph(store.nodeLabels(), store.relationshipTypes(), Optional.of("weight"))
                .concurrentCopy();
        Map<Long, Double> rank = new HashMap<>();
        for (int i = 0; i < sources.size(); i++) {
            long node = graph.safeToMappedNodeId(sources.get(i).getId());
            double weight = weights.get(i);
            if (node >= 0 && weight > 0) {
                rank.merge(node, (1 - damping) * weight, Double::sum);
            }
        }
        Map<Long, Double> delta = new HashMap<>(rank);
        Map<Long, Double> degrees = new HashMap<>();
        for (long step = 0; step < iterations; step++) {
            guard.check();
            Map<Long, Double> next = new HashMap<>();
            for (Map.Entry<Long, Double> entry : delta.entrySet()) {
                double mass = entry.getValue();
                long node = entry.getKey();
                if (mass <= tolerance) {
                    continue;
                }
                double degree = degrees.computeIfAbsent(node, n -> weightedDegree(graph, n));
                if (degree <= 0) {
                    continue;
                }
                double share = damping * mass / degree;
                graph.forEachRelationship(node, 1.0, (source, target, weight) -> {
                    next.merge(target, share * weight, Double::sum);
                    return true;
                });
            }
            if (next.isEmpty()) {
                break;
            }
            next.forEach((node, mass) -> rank.merge(node, mass, Double::sum));
            delta = next;
        }
        NodeLabel wanted = NodeLabel.of(label);
        List<Map.Entry<Long, Double>> ranked = new ArrayList<>();
        for (Map.Entry<Long, Double> entry : rank.entrySet()) {
            if (entry.getValue() > 0 && graph.hasLabel(entry.getKey(), wanted)) {
                ranked.add(entry);
            }
        }
        ranked.sort((a, b) -> Double.compare(b.getValue(), a.getValue()));
        return ranked.stream()
                .limit(depth)
                .map(e -> new Ranked(tx.getNodeById(graph.toOriginalNodeId(e.getKey())), e.getValue()));
    }

    private static double weightedDegree(Graph graph, long node) {
        double[] sum = {0.0};
        graph.forEachRelationship(node, 1.0, (source, target, weight) -> {
            sum[0] += weight;
            return true;
        });
        return sum[0];
    }
}
