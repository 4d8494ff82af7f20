package dev.baton.examples.stock;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Run two of these against one PostgreSQL: the tick job runs once per tick across both, and
 * {@code POST /stock/{item}/take} never sells an item twice. Baton's lock client comes from the application's
 * {@code DataSource} ({@code spring.datasource.*}); nothing else is configured.
 */
@SpringBootApplication
@EnableScheduling
public class StockApplication {
    public static void main(String[] args) {
        SpringApplication.run(StockApplication.class, args);
    }
}
