import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Real share-group (KIP-932) and streams-group (KIP-1071) members, and the Admin client's view of their groups.
 *
 * Modes (driven by broker/group_clients.py):
 *   share BOOTSTRAP GROUP CLIENT_ID TOPIC [RACK]    a KafkaShareConsumer that polls and acknowledges (ACCEPT)
 *   streams BOOTSTRAP APP_ID CLIENT_ID INPUT OUTPUT STATE_DIR
 *                                                   Kafka Streams, group.protocol=streams: INPUT -> groupBy value
 *                                                   (a repartition topic) -> count (a changelog) -> OUTPUT
 *   admin BOOTSTRAP                                 one JSON line per command line on stdin
 * A member prints "ready" once started; the line "close" (or end of input) on stdin closes it cleanly, which
 * leaves the group (ShareConsumer.close() sends a leave heartbeat; Streams closes with LEAVE_GROUP); SIGKILL
 * is a crash the broker only notices when the member's session times out. Under the streams protocol Kafka
 * 4.2's Streams client sends no instance id and no rack (StreamsGroupHeartbeatRequestManager never sets them):
 * static membership and rack-aware assignment are not there yet, so this program offers neither.
 */
public final class GroupClients {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "share" -> share(args[1], args[2], args[3], args[4], args.length > 5 ? args[5] : "");
            case "streams" -> streams(args[1], args[2], args[3], args[4], args[5], args[6]);
            case "admin" -> admin(args[1]);
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    /** Blocks until stdin says "close" or ends. */
    private static void awaitClose() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals("close")) {
                return;
            }
        }
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    // -- share ----------------------------------------------------------------------------------------------
    private static void share(String bootstrap, String group, String clientId, String topic, String rack)
        throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("client.id", clientId);
        props.put("share.acknowledgement.mode", "explicit");
        if (!rack.isEmpty()) {
            props.put("client.rack", rack);
        }
        KafkaShareConsumer<String, String> consumer =
            new KafkaShareConsumer<>(props, new StringDeserializer(), new StringDeserializer());
        Thread closer = new Thread(() -> {
            try {
                awaitClose();
            } catch (Exception ignored) {
                // stdin broken: close all the same
            }
            consumer.wakeup();
        }, "closer");
        closer.setDaemon(true);
        consumer.subscribe(List.of(topic));
        closer.start();
        say("ready");
        long polled = 0;
        try {
            while (true) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> record : records) {
                    consumer.acknowledge(record, AcknowledgeType.ACCEPT);
                }
                if (!records.isEmpty()) {
                    consumer.commitSync();
                    polled += records.count();
                    say("polled " + polled);
                }
            }
        } catch (WakeupException closing) {
            // asked to close
        } finally {
            consumer.close(Duration.ofSeconds(30));
        }
        say("closed");
    }

    // -- streams --------------------------------------------------------------------------------------------
    private static void streams(String bootstrap, String appId, String clientId, String input, String output,
                                String stateDir) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.CLIENT_ID_CONFIG, clientId);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "500");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .groupBy((key, value) -> value, Grouped.with("by-value", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .mapValues(count -> Long.toString(count))
            .to(output, Produced.with(Serdes.String(), Serdes.String()));
        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((now, before) -> say("state " + now));
        streams.start();
        say("ready");
        try {
            awaitClose();
        } finally {
            streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(30)));
        }
        say("closed");
    }

    // -- admin ----------------------------------------------------------------------------------------------
    private static void admin(String bootstrap) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(props)) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] words = line.trim().split("\\s+");
                if (words.length < 2) {
                    continue;
                }
                ObjectNode answer;
                try {
                    answer = switch (words[0]) {
                        case "describe-share" -> describeShare(admin, words[1]);
                        case "describe-streams" -> describeStreams(admin, words[1]);
                        case "set-config" -> setConfig(admin, words);
                        case "delete-share" -> ok(admin.deleteShareGroups(List.of(words[1])).all());
                        case "delete-streams" -> ok(admin.deleteStreamsGroups(List.of(words[1])).all());
                        default -> error(words[1], new IllegalArgumentException("unknown command " + words[0]));
                    };
                } catch (ExecutionException failed) {
                    answer = error(words[1], failed.getCause());
                }
                say(JSON.writeValueAsString(answer));
            }
        }
    }

    private static ObjectNode ok(org.apache.kafka.common.KafkaFuture<Void> done) throws Exception {
        done.get(30, TimeUnit.SECONDS);
        return JSON.createObjectNode().put("ok", true);
    }

    private static ObjectNode error(String group, Throwable cause) {
        return JSON.createObjectNode().put("group_id", group).put("state", "DEAD")
            .put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
    }

    private static ObjectNode setConfig(Admin admin, String[] words) throws Exception {
        List<AlterConfigOp> ops = new ArrayList<>();
        for (int i = 2; i < words.length; i++) {
            String[] kv = words[i].split("=", 2);
            ops.add(new AlterConfigOp(new ConfigEntry(kv[0], kv[1]), AlterConfigOp.OpType.SET));
        }
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, words[1]);
        return ok(admin.incrementalAlterConfigs(Map.of(group, ops)).all());
    }

    private static ObjectNode describeShare(Admin admin, String group) throws Exception {
        ShareGroupDescription d = admin.describeShareGroups(List.of(group)).describedGroups().get(group)
            .get(30, TimeUnit.SECONDS);
        ObjectNode out = JSON.createObjectNode();
        out.put("group_id", d.groupId());
        out.put("state", d.groupState().name());
        out.put("group_epoch", d.groupEpoch());
        out.put("assignment_epoch", d.targetAssignmentEpoch());
        out.put("coordinator", d.coordinator() == null ? -1 : d.coordinator().id());
        ArrayNode members = out.putArray("members");
        List<ShareMemberDescription> sorted = new ArrayList<>(d.members());
        sorted.sort(Comparator.comparing(ShareMemberDescription::clientId).thenComparing(ShareMemberDescription::consumerId));
        for (ShareMemberDescription m : sorted) {
            ObjectNode member = members.addObject();
            member.put("member_id", m.consumerId());
            member.put("client_id", m.clientId());
            member.put("host", m.host());
            member.put("rack_id", m.rackId().orElse(null));
            member.put("member_epoch", m.memberEpoch());
            ArrayNode assignment = member.putArray("assignment");
            List<TopicPartition> partitions = new ArrayList<>(m.assignment().topicPartitions());
            partitions.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
            for (TopicPartition tp : partitions) {
                assignment.addObject().put("topic", tp.topic()).put("partition", tp.partition());
            }
        }
        return out;
    }

    private static ObjectNode describeStreams(Admin admin, String group) throws Exception {
        StreamsGroupDescription d = admin.describeStreamsGroups(List.of(group)).describedGroups().get(group)
            .get(30, TimeUnit.SECONDS);
        ObjectNode out = JSON.createObjectNode();
        out.put("group_id", d.groupId());
        out.put("state", d.groupState().name());
        out.put("group_epoch", d.groupEpoch());
        out.put("target_assignment_epoch", d.targetAssignmentEpoch());
        out.put("topology_epoch", d.topologyEpoch());
        out.put("coordinator", d.coordinator() == null ? -1 : d.coordinator().id());
        ArrayNode subtopologies = out.putArray("subtopologies");
        List<StreamsGroupSubtopologyDescription> subs = new ArrayList<>(d.subtopologies());
        subs.sort(Comparator.comparing(StreamsGroupSubtopologyDescription::subtopologyId));
        for (StreamsGroupSubtopologyDescription s : subs) {
            ObjectNode sub = subtopologies.addObject();
            sub.put("subtopology_id", s.subtopologyId());
            strings(sub.putArray("source_topics"), s.sourceTopics());
            strings(sub.putArray("repartition_sink_topics"), s.repartitionSinkTopics());
            topicInfos(sub.putObject("state_changelog_topics"), s.stateChangelogTopics());
            topicInfos(sub.putObject("repartition_source_topics"), s.repartitionSourceTopics());
        }
        ArrayNode members = out.putArray("members");
        List<StreamsGroupMemberDescription> sorted = new ArrayList<>(d.members());
        sorted.sort(Comparator.comparing(StreamsGroupMemberDescription::clientId)
            .thenComparing(StreamsGroupMemberDescription::memberId));
        for (StreamsGroupMemberDescription m : sorted) {
            ObjectNode member = members.addObject();
            member.put("member_id", m.memberId());
            member.put("client_id", m.clientId());
            member.put("instance_id", m.instanceId().orElse(null));
            member.put("rack_id", m.rackId().orElse(null));
            member.put("member_epoch", m.memberEpoch());
            member.put("topology_epoch", m.topologyEpoch());
            member.put("process_id", m.processId());
            member.put("host", m.clientHost());
            member.put("is_classic", m.isClassic());
            tasks(member.putObject("assignment"), m.assignment());
            tasks(member.putObject("target_assignment"), m.targetAssignment());
        }
        return out;
    }

    private static void strings(ArrayNode into, Collection<String> values) {
        values.stream().sorted().forEach(into::add);
    }

    private static void topicInfos(ObjectNode into, Map<String, StreamsGroupSubtopologyDescription.TopicInfo> topics) {
        topics.keySet().stream().sorted().forEach(name -> {
            StreamsGroupSubtopologyDescription.TopicInfo info = topics.get(name);
            into.putObject(name).put("partitions", info.partitions()).put("replication_factor", info.replicationFactor());
        });
    }

    private static void tasks(ObjectNode into, StreamsGroupMemberAssignment assignment) {
        taskIds(into.putArray("active"), assignment.activeTasks());
        taskIds(into.putArray("standby"), assignment.standbyTasks());
        taskIds(into.putArray("warmup"), assignment.warmupTasks());
    }

    private static void taskIds(ArrayNode into, List<StreamsGroupMemberAssignment.TaskIds> tasks) {
        List<StreamsGroupMemberAssignment.TaskIds> sorted = new ArrayList<>(tasks);
        sorted.sort(Comparator.comparing(StreamsGroupMemberAssignment.TaskIds::subtopologyId));
        for (StreamsGroupMemberAssignment.TaskIds t : sorted) {
            ObjectNode task = into.addObject().put("subtopology_id", t.subtopologyId());
            ArrayNode partitions = task.putArray("partitions");
            t.partitions().stream().sorted().forEach(partitions::add);
        }
    }
}
