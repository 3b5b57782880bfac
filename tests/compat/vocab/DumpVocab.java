/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * Prints the configuration keys the pinned reference jars define, one "key<TAB>group" line per
 * (key, group) pair, sorted. Run through tests/compat/vocab/generate, which resolves the
 * classpath from pom.xml and turns the output into src/config/vocab_data.c.
 *
 * Everything is read from the classes' own ConfigDefs (reflection where a definition is not
 * public), so the list follows the jars, not our memory of them.
 */
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.common.config.ConfigDef;

public class DumpVocab {
	private static final Set<String> lines = new TreeSet<>();

	private static void add(String group, Iterable<String> keys) {
		add(group, keys, false);
	}

	private static void add(String group, Iterable<String> keys, boolean mayBeEmpty) {
		int n = 0;
		for (String k : keys) {
			lines.add(k + "\t" + group);
			n++;
		}
		if (n == 0 && !mayBeEmpty) {
			throw new IllegalStateException("no keys for group " + group);
		}
	}

	private static void addDef(String group, ConfigDef def) {
		add(group, def.names());
	}

	/* A ConfigDef from a static method (any visibility) taking no argument. */
	private static ConfigDef staticDef(String cls, String method) throws Exception {
		Method m = Class.forName(cls).getDeclaredMethod(method);
		m.setAccessible(true);
		return (ConfigDef) m.invoke(null);
	}

	/* A ConfigDef from a static field (any visibility). */
	private static ConfigDef fieldDef(String cls, String field) throws Exception {
		Field f = Class.forName(cls).getDeclaredField(field);
		f.setAccessible(true);
		return (ConfigDef) f.get(null);
	}

	/* A ConfigDef from an instance's config(), for plugins (transforms, header converters). */
	private static ConfigDef instanceDef(String cls) throws Exception {
		Object o = Class.forName(cls).getDeclaredConstructor().newInstance();
		return (ConfigDef) o.getClass().getMethod("config").invoke(o);
	}

	/* The names of a Debezium io.debezium.config.Field.Set held in a static field. */
	private static List<String> debeziumFields(String cls, String field) throws Exception {
		Field f = Class.forName(cls).getDeclaredField(field);
		f.setAccessible(true);
		List<String> out = new ArrayList<>();
		for (Object o : (Iterable<?>) f.get(null)) {
			out.add((String) o.getClass().getMethod("name").invoke(o));
		}
		return out;
	}

	/* The names of every static io.debezium.config.Field constant of a class (any visibility). */
	private static List<String> debeziumConstants(String cls) throws Exception {
		Class<?> fieldClass = Class.forName("io.debezium.config.Field");
		List<String> out = new ArrayList<>();
		for (Field f : Class.forName(cls).getDeclaredFields()) {
			if (!java.lang.reflect.Modifier.isStatic(f.getModifiers()) || f.getType() != fieldClass) {
				continue;
			}
			f.setAccessible(true);
			Object o = f.get(null);
			if (o != null) {
				out.add((String) fieldClass.getMethod("name").invoke(o));
			}
		}
		return out;
	}

	private static ConfigDef distributedDef() throws Exception {
		Class<?> crypto = Class.forName("org.apache.kafka.connect.runtime.distributed.Crypto");
		Object system = crypto.getField("SYSTEM").get(null);
		Method m = Class.forName("org.apache.kafka.connect.runtime.distributed.DistributedConfig")
			.getDeclaredMethod("config", crypto);
		m.setAccessible(true);
		return (ConfigDef) m.invoke(null, system);
	}

	/* PostgreSQL JDBC driver properties: Debezium hands database.<name> to the driver. */
	private static List<String> jdbcProperties() throws Exception {
		List<String> out = new ArrayList<>();
		for (Object p : Class.forName("org.postgresql.PGProperty").getEnumConstants()) {
			out.add("database." + p.getClass().getMethod("getName").invoke(p));
		}
		return out;
	}

	public static void main(String[] args) throws Exception {
		addDef("worker", fieldDef("org.apache.kafka.connect.runtime.standalone.StandaloneConfig", "CONFIG"));
		addDef("worker", distributedDef());
		addDef("producer", staticDef("org.apache.kafka.clients.producer.ProducerConfig", "configDef"));
		addDef("connect", staticDef("org.apache.kafka.connect.runtime.SourceConnectorConfig", "configDef"));
		addDef("connector", staticDef("io.debezium.connector.postgresql.PostgresConnectorConfig", "configDef"));
		add("connector", debeziumFields("io.debezium.connector.postgresql.PostgresConnectorConfig", "ALL_FIELDS"));
		/* Read by the connector's components outside ALL_FIELDS (topic naming, common options). */
		add("connector", debeziumConstants("io.debezium.schema.AbstractTopicNamingStrategy"));
		add("connector", debeziumConstants("io.debezium.config.CommonConnectorConfig"));
		add("jdbc", jdbcProperties());
		/* Debezium Server runs the connector in the embedded engine (debezium.source.offset.* ...). */
		add("engine", debeziumConstants("io.debezium.embedded.EmbeddedEngineConfig"));
		add("engine", debeziumConstants("io.debezium.embedded.async.AsyncEngineConfig"));
		addDef("smt", instanceDef("io.debezium.transforms.outbox.EventRouter"));
		addDef("smt", staticDef("io.debezium.transforms.outbox.EventRouterConfigDefinition", "configDef"));
		addDef("converter", staticDef("org.apache.kafka.connect.json.JsonConverterConfig", "configDef"));
		addDef("converter", staticDef("org.apache.kafka.connect.storage.StringConverterConfig", "configDef"));
		addDef("converter", instanceDef("io.debezium.converters.BinaryDataConverter"));
		/* SimpleHeaderConverter defines no keys today; listed so a future one is picked up. */
		add("header", instanceDef("org.apache.kafka.connect.storage.SimpleHeaderConverter").names(), true);
		for (String l : lines) {
			System.out.println(l);
		}
	}
}
